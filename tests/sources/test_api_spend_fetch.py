"""Paged fetching against a local HTTP server (pytest-httpserver on 127.0.0.1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Response

from sources.api_spend import fetch, openai_org
from sources.common import read_head

KEY_ENV = "GPU_LEDGER_TEST_ADMIN_KEY"
SECRET = "sk-admin-test-0123456789"


@pytest.fixture()
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, SECRET)
    return SECRET


@pytest.fixture()
def server():
    srv = HTTPServer(host="127.0.0.1", port=0)
    srv.start()
    yield srv
    srv.clear()
    srv.stop()


def _page(n: int, has_more: bool, next_page: str | None) -> dict:
    return {"object": "page", "has_more": has_more, "next_page": next_page, "data": [
        {"object": "bucket", "start_time": 1730419200 + 86400 * n, "end_time": 1730505600 + 86400 * n,
         "results": [{"object": "organization.costs.result", "amount": {"value": n + 0.5, "currency": "usd"}}]}]}


def _no_sleep(waits: list[float]):
    return waits.append


def test_follows_next_page_until_done(server: HTTPServer, key: str, tmp_path: Path) -> None:
    url = "/v1/organization/costs"
    auth = {"Authorization": f"Bearer {SECRET}"}
    server.expect_ordered_request(url, query_string={"start_time": "1730419200", "bucket_width": "1d", "limit": "180"},
                                  headers=auth).respond_with_json(_page(0, True, "p1"))
    server.expect_ordered_request(url, query_string={"start_time": "1730419200", "bucket_width": "1d", "limit": "180",
                                                     "page": "p1"}, headers=auth).respond_with_json(_page(1, True, "p2"))
    server.expect_ordered_request(url, query_string={"start_time": "1730419200", "bucket_width": "1d", "limit": "180",
                                                     "page": "p2"}).respond_with_json(_page(2, False, None))
    result = fetch.fetch_openai_costs(1730419200, key_env=KEY_ENV, base_url=server.url_for("/v1"))
    server.check_assertions()
    assert len(result.pages) == 3 and len(result.buckets) == 3
    path = fetch.write_pages(result, tmp_path / "costs.json", endpoint="/organization/costs", provider="openai")
    assert openai_org.detect_costs(path, read_head(path))
    out = openai_org.parse_costs(path)
    assert out.tables["api_cost_buckets"].column("amount").to_pylist() == ["0.5", "1.5", "2.5"]
    assert out.warnings == []


def test_repeated_page_stops(server: HTTPServer, key: str) -> None:
    server.expect_request("/v1/organization/costs", query_string={"start_time": "1", "bucket_width": "1d", "limit": "180"}
                          ).respond_with_json(_page(0, True, "same"))
    server.expect_request("/v1/organization/costs").respond_with_json(_page(1, True, "same"))
    with pytest.raises(fetch.RepeatedPageError) as exc:
        fetch.fetch_openai_costs(1, key_env=KEY_ENV, base_url=server.url_for("/v1"))
    assert "'same'" in str(exc.value) and "already returned" in str(exc.value)
    assert len(server.log) == 2  # page 2 hands out "same" again: stop before requesting it twice


def test_429_retry_after_honoured(server: HTTPServer, key: str) -> None:
    waits: list[float] = []
    server.expect_ordered_request("/v1/organization/costs").respond_with_response(
        Response("slow down", status=429, headers={"Retry-After": "7"}))
    server.expect_ordered_request("/v1/organization/costs").respond_with_response(Response("oops", status=503))
    server.expect_ordered_request("/v1/organization/costs").respond_with_json(_page(0, False, None))
    result = fetch.fetch_openai_costs(1, key_env=KEY_ENV, base_url=server.url_for("/v1"), sleep=waits.append, backoff=0.5)
    assert len(result.pages) == 1
    assert waits == [7.0, 1.0]  # Retry-After honoured; then exponential backoff (0.5 * 2**1)


def test_retries_exhausted_and_key_redacted(server: HTTPServer, key: str) -> None:
    server.expect_request("/v1/organization/costs").respond_with_response(
        Response(f"bad key {SECRET}", status=401))
    with pytest.raises(fetch.FetchError) as exc:
        fetch.fetch_openai_costs(1, key_env=KEY_ENV, base_url=server.url_for("/v1"))
    assert "401" in str(exc.value) and SECRET not in str(exc.value) and "***" in str(exc.value)
    server.clear()
    server.expect_request("/v1/organization/costs").respond_with_response(Response("down", status=500))
    with pytest.raises(fetch.FetchError, match="HTTP 500"):
        fetch.fetch_openai_costs(1, key_env=KEY_ENV, base_url=server.url_for("/v1"), sleep=lambda s: None, max_retries=2)
    assert len(server.log) == 3


def test_missing_key_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(fetch.FetchError, match=KEY_ENV):
        fetch.fetch_openai_costs(1, key_env=KEY_ENV, base_url="http://127.0.0.1:9")


def test_has_more_without_cursor(server: HTTPServer, key: str) -> None:
    server.expect_request("/v1/organization/costs").respond_with_json(_page(0, True, None))
    with pytest.raises(fetch.FetchError, match="no next_page"):
        fetch.fetch_openai_costs(1, key_env=KEY_ENV, base_url=server.url_for("/v1"))


def test_anthropic_report_header_and_merge(server: HTTPServer, key: str, tmp_path: Path) -> None:
    from sources.api_spend import anthropic_reports

    fixture = Path(__file__).resolve().parent.parent / "fixtures/api_spend/anthropic_cost_report_constructed.json"
    doc = json.loads(fixture.read_text())
    first = {**doc, "data": doc["data"][:1], "has_more": True, "next_page": "c2"}
    second = {**doc, "data": doc["data"][1:]}
    server.expect_ordered_request("/v1/cost", headers={"x-api-key": SECRET, "anthropic-version": "2023-06-01"}
                                  ).respond_with_json(first)
    server.expect_ordered_request("/v1/cost", query_string={"starting_at": "2026-01-05T00:00:00Z",
                                  "ending_at": "2026-01-08T00:00:00Z", "bucket_width": "1d", "page": "c2"}
                                  ).respond_with_json(second)
    res = fetch.fetch_anthropic_report(server.url_for("/v1/cost"), "2026-01-05T00:00:00Z", "2026-01-08T00:00:00Z",
                                       key_env=KEY_ENV)
    server.check_assertions()
    path = fetch.write_pages(res, tmp_path / "a.json", endpoint="cost_report", provider="anthropic")
    assert anthropic_reports.detect_cost_report(path, read_head(path))
    out = anthropic_reports.parse_cost_report(path)
    assert out.tables["api_cost_buckets"].num_rows == 7 and out.warnings == []
