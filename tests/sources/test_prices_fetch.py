"""Price fetchers against a local pytest-httpserver (127.0.0.1 only)."""

from __future__ import annotations

import json
from pathlib import Path

from werkzeug import Response

from sources.prices.fetch import USER_AGENT, FetchSettings, fetch_source, load_sources

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "prices"
FAST = FetchSettings(timeout_s=2, max_retries=3, backoff_s=0.01, max_backoff_s=0.05, max_bytes=100_000)


def _spec(httpserver, path="/prices", **kw):
    return {
        "name": "t",
        "provider": "azure",
        "format": "azure_retail_prices",
        "url": httpserver.url_for(path),
        **kw,
    }


def test_azure_paging_follows_next_page_link(httpserver):
    page1 = json.loads((FIX / "azure_retail_prices_page1.json").read_text())
    page1["NextPageLink"] = httpserver.url_for("/prices") + "?$skip=5"
    page2 = (FIX / "azure_retail_prices_page2.json").read_bytes()
    httpserver.expect_ordered_request("/prices", query_string={"$filter": "x"}).respond_with_json(page1)
    httpserver.expect_ordered_request("/prices", query_string={"$skip": "5"}).respond_with_data(
        page2, content_type="application/json"
    )
    result = fetch_source(_spec(httpserver, params={"$filter": "x"}, paging="azure_next_page_link"), FAST)
    assert result.ok, result.error
    assert [r.status for r in result.responses] == [200, 200]
    assert result.responses[1].body == page2 and result.responses[1].url.endswith("$skip=5")
    assert result.responses[0].content_type.startswith("application/json")
    assert httpserver.log[0][0].headers["User-Agent"] == USER_AGENT


def test_429_retry_after_is_honoured_and_capped(httpserver):
    waits = []
    httpserver.expect_ordered_request("/prices").respond_with_response(
        Response("slow down", status=429, headers={"Retry-After": "120"})
    )
    httpserver.expect_ordered_request("/prices").respond_with_data(b'{"Items": []}')
    result = fetch_source(_spec(httpserver), FAST, sleep=waits.append)
    assert result.ok and result.responses[0].body == b'{"Items": []}'
    assert waits == [FAST.max_backoff_s]  # 120 s asked, capped by settings


def test_500_then_success(httpserver):
    waits = []
    httpserver.expect_ordered_request("/prices").respond_with_data("boom", status=500)
    httpserver.expect_ordered_request("/prices").respond_with_data("boom", status=503)
    httpserver.expect_ordered_request("/prices").respond_with_data(b"ok")
    result = fetch_source(_spec(httpserver), FAST, sleep=waits.append)
    assert result.ok and result.responses[0].body == b"ok"
    assert waits == [0.01, 0.02]  # exponential backoff


def test_persistent_500_is_an_error_result_not_an_exception(httpserver):
    httpserver.expect_request("/prices").respond_with_data("boom", status=500)
    result = fetch_source(_spec(httpserver), FAST, sleep=lambda s: None)
    assert not result.ok and "gave up after 4 attempts (HTTP 500)" in result.error
    assert len(httpserver.log) == 4


def test_404_is_not_retried(httpserver):
    httpserver.expect_request("/prices").respond_with_data("nope", status=404)
    result = fetch_source(_spec(httpserver), FAST, sleep=lambda s: None)
    assert not result.ok and "HTTP 404" in result.error and len(httpserver.log) == 1


def test_timeout_becomes_error(httpserver):
    import time

    def slow(request):
        time.sleep(0.5)
        return Response("late")

    httpserver.expect_request("/prices").respond_with_handler(slow)
    settings = FetchSettings(timeout_s=0.1, max_retries=1, backoff_s=0.01, max_backoff_s=0.01, max_bytes=1000)
    result = fetch_source(_spec(httpserver), settings, sleep=lambda s: None)
    assert not result.ok and "Timeout" in result.error


def test_oversized_body_rejected(httpserver):
    httpserver.expect_request("/prices").respond_with_data(b"x" * 5000)
    small = FetchSettings(timeout_s=2, max_retries=0, backoff_s=0.01, max_backoff_s=0.01, max_bytes=1000)
    result = fetch_source(_spec(httpserver), small)
    assert not result.ok and "1000-byte limit" in result.error


def test_registry_sources_all_disabled_by_default():
    sources, settings = load_sources()
    assert sources and not any(s.get("enabled") for s in sources)
    assert {s["format"] for s in sources} <= {
        "azure_retail_prices",
        "aws_pricelist_offer",
        "gcp_cloudbilling_skus",
        "oci_pricelist",
        "html_pricing_table",
    }
    assert settings.timeout_s > 0 and settings.max_bytes > 0
