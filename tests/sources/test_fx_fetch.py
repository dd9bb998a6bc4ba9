"""The ECB rate-file fetcher (the shared fetcher with `unzip`) against pytest-httpserver on 127.0.0.1.

The served zip holds a verbatim slice of the bundled ECB history (tests/fixtures/fx/PROVENANCE.md).
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from werkzeug import Response

from sources.fx import ecb
from sources.prices.fetch import FetchSettings, fetch_source, load_sources

REPO = Path(__file__).resolve().parents[2]
SLICE = REPO / "tests" / "fixtures" / "fx" / "eurofxref-hist-slice.csv"
FAST = FetchSettings(timeout_s=2, max_retries=1, backoff_s=0.01, max_backoff_s=0.02, max_bytes=100_000)
ETAG = '"eurofxref-hist-2025-02-07"'


def ecb_zip(csv: bytes = b"", member: str = "eurofxref-hist.csv") -> bytes:
    """The slice zipped as the ECB serves it: one deflated member, a fixed timestamp (same bytes each run)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo(member, date_time=(2025, 2, 7, 16, 0, 0)), csv or SLICE.read_bytes(),
                         compress_type=zipfile.ZIP_DEFLATED)
    return buf.getvalue()


def _spec(httpserver) -> dict:
    return {"name": "ecb_local", "provider": "ecb", "format": "ecb_reference_rates",
            "url": httpserver.url_for("/stats/eurofxref/eurofxref-hist.zip"), "unzip": "eurofxref-hist.csv"}


def test_zip_is_read_in_memory_and_the_member_parses(httpserver, tmp_path) -> None:
    httpserver.expect_request("/stats/eurofxref/eurofxref-hist.zip").respond_with_data(
        ecb_zip(), content_type="application/zip", headers={"ETag": ETAG})
    result = fetch_source(_spec(httpserver), FAST)
    assert result.ok, result.error
    (resp,) = result.responses
    assert resp.body == SLICE.read_bytes() and resp.member == "eurofxref-hist.csv"
    assert resp.validators == {"etag": ETAG}
    # What the fetcher returns is what the fx parser reads: the 10 business days of the slice.
    path = tmp_path / "eurofxref-hist.csv"
    path.write_bytes(resp.body)
    assert ecb.detect(path, resp.body[:4096])
    out = ecb.parse(path)
    assert not out.rejects
    rates = {(str(r["rate_date"]), r["quote"]): r["rate"] for r in out.tables["fx_rates"].to_pylist()}
    assert rates[("2025-01-31", "USD")] == "1.0393" and rates[("2025-02-03", "CAD")] == "1.5051"
    assert len({d for d, _ in rates}) == 10


def test_corrupt_zip_is_a_named_error_with_nothing_to_land(httpserver) -> None:
    truncated = ecb_zip()[:200]  # the transfer cut short: no central directory
    httpserver.expect_request("/stats/eurofxref/eurofxref-hist.zip").respond_with_data(truncated)
    result = fetch_source(_spec(httpserver), FAST)
    assert not result.ok and "corrupt zip (BadZipFile" in result.error and "eurofxref-hist.zip" in result.error
    assert result.responses == []


def test_zip_without_the_member_is_a_named_error(httpserver) -> None:
    httpserver.expect_request("/stats/eurofxref/eurofxref-hist.zip").respond_with_data(
        ecb_zip(member="eurofxref.csv"))
    result = fetch_source(_spec(httpserver), FAST)
    assert not result.ok and "no member 'eurofxref-hist.csv'" in result.error and result.responses == []


def test_member_inflating_past_the_cap_is_refused(httpserver) -> None:
    big = SLICE.read_bytes() * 50  # ~143 kB inflated, a few kB zipped
    httpserver.expect_request("/stats/eurofxref/eurofxref-hist.zip").respond_with_data(ecb_zip(big))
    result = fetch_source(_spec(httpserver), FAST)
    assert not result.ok and "over the 100000-byte limit" in result.error and result.responses == []


def test_http_error_is_an_error_result(httpserver) -> None:
    httpserver.expect_request("/stats/eurofxref/eurofxref-hist.zip").respond_with_data("gone", status=404)
    result = fetch_source(_spec(httpserver), FAST, sleep=lambda s: None)
    assert not result.ok and "HTTP 404" in result.error and result.responses == []


def test_conditional_request_and_304(httpserver) -> None:
    def handler(request):
        # The validators recorded from the last landed response travel as If-None-Match / If-Modified-Since.
        assert request.headers.get("If-None-Match") == ETAG
        assert request.headers.get("If-Modified-Since") == "Fri, 07 Feb 2025 15:00:00 GMT"
        return Response(status=304, headers={"ETag": ETAG})

    httpserver.expect_request("/stats/eurofxref/eurofxref-hist.zip").respond_with_handler(handler)
    result = fetch_source(_spec(httpserver), FAST, validators={"etag": ETAG,
                                                                "last_modified": "Fri, 07 Feb 2025 15:00:00 GMT"})
    assert result.ok, result.error
    (resp,) = result.responses
    assert resp.not_modified and resp.status == 304 and resp.body == b"" and resp.member is None


def test_unconditional_request_never_reads_304_as_not_modified(httpserver) -> None:
    # Without validators a 304 is no answer to anything we asked: it is not taken as "unchanged".
    httpserver.expect_request("/stats/eurofxref/eurofxref-hist.zip").respond_with_data(b"", status=304)
    result = fetch_source(_spec(httpserver), FAST)
    assert not result.ok and "corrupt zip" in result.error


def test_repository_fx_config_is_the_ecb_history_and_disabled() -> None:
    sources, settings = load_sources(REPO / "config" / "fetch" / "fx_sources.yaml")
    assert [(s["name"], s["format"], s["unzip"], s["enabled"]) for s in sources] == [
        ("ecb_eurofxref_hist", "ecb_reference_rates", "eurofxref-hist.csv", False)]
    assert sources[0]["url"] == "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.zip"
    assert settings.timeout_s == 30 and settings.max_retries == 4
