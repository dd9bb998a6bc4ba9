"""`fetch/fx` materialized in process against pytest-httpserver (127.0.0.1): the ECB history zip lands
as its CSV (family `fx`, observed at the fetch time) and loads into raw.fx_rates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg
import duckdb
import yaml
from werkzeug import Response

from pipelines.defs.ingest.assets import RAW_ASSETS, landing_inputs
from pipelines.defs.ingest.fetch import FX_KEY, VALIDATORS, fetch_fx
from pipelines.resources import LedgerResource, refresh_lock_resource
from tests.sources.test_fx_fetch import SLICE, ecb_zip
from warehouse.landing import MANIFEST, read_manifest

RAW_FX = next(a for a in RAW_ASSETS if a.key.path == ["raw", "fx"])
ASSETS = [landing_inputs, fetch_fx, RAW_FX]
ZIP_PATH = "/stats/eurofxref/eurofxref-hist.zip"
ETAG = '"hist-20250207"'


def _run(home: Path, inputs: Path) -> dict:
    result = dg.materialize(ASSETS, resources={"ledger": LedgerResource(home=str(home), inputs=str(inputs)),
                                               "refresh_lock": refresh_lock_resource})
    assert result.success
    (mat,) = [m for m in result.get_asset_materialization_events() if m.asset_key == FX_KEY]
    (check,) = [e for e in result.get_asset_check_evaluations() if e.asset_key == FX_KEY]
    return {**{k: v.value for k, v in mat.materialization.metadata.items()}, "check_passed": check.passed}


def _fx_rows(home: Path) -> int:
    con = duckdb.connect(str(home / "ledger.duckdb"), read_only=True)
    try:
        return con.execute("select count(*) from raw.fx_rates").fetchone()[0]
    finally:
        con.close()


def _setup(httpserver, tmp_path: Path) -> tuple[Path, Path]:
    home, inputs = tmp_path / "home", tmp_path / "inputs"
    (inputs / "registry").mkdir(parents=True, exist_ok=True)
    defaults = {"timeout_s": 5, "max_retries": 1, "backoff_s": 0.01, "max_backoff_s": 0.02}
    sources = [
        {"name": "ecb_local", "provider": "ecb", "format": "ecb_reference_rates", "enabled": True,
         "url": httpserver.url_for(ZIP_PATH), "unzip": "eurofxref-hist.csv"},
        {"name": "bank_down", "provider": "bank", "format": "fx_rates_csv", "enabled": True,
         "url": httpserver.url_for("/bank/rates.csv")},
    ]
    (inputs / "registry" / "fx_sources.yaml").write_text(yaml.safe_dump({"defaults": defaults, "sources": sources}))
    httpserver.expect_request("/bank/rates.csv").respond_with_data("internal error", status=500)
    return home, inputs


def test_fetch_fx_lands_the_csv_reports_the_failed_source_and_asks_conditionally(httpserver, tmp_path) -> None:
    home, inputs = _setup(httpserver, tmp_path)
    httpserver.expect_request(ZIP_PATH).respond_with_data(ecb_zip(), content_type="application/zip",
                                                          headers={"ETag": ETAG})
    before = datetime.now(UTC).replace(microsecond=0)
    meta = _run(home, inputs)
    after = datetime.now(UTC) + timedelta(seconds=1)

    # The CSV inside the zip is landed as received (not the zip), observed at the fetch time.
    (landed,) = [f for f in read_manifest(home / "landing") if f.family == "fx"]
    assert landed.origin == httpserver.url_for(ZIP_PATH) and landed.http_status == 200
    assert landed.landed_path.endswith(".csv")
    assert (home / "landing" / landed.landed_path).read_bytes() == SLICE.read_bytes()
    assert before <= datetime.strptime(landed.observed_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) <= after
    # The failing source is named with its error; the good one loaded all the same.
    assert meta["failed_providers"] == f"bank_down: {httpserver.url_for('/bank/rates.csv')}: gave up after 2 attempts (HTTP 500)"
    assert not meta["check_passed"] and meta["files_new"] == 1
    rows = _fx_rows(home)
    assert rows > 10 * 25  # 10 business days, each with a few dozen currencies quoted
    manifest = (home / "landing" / MANIFEST).read_text()

    # Next night the ECB has nothing new: asked with the landed ETag, it answers 304; nothing lands.
    httpserver.clear()
    _setup(httpserver, tmp_path)
    httpserver.expect_request(ZIP_PATH, headers={"If-None-Match": ETAG}).respond_with_response(
        Response(status=304, headers={"ETag": ETAG}))
    meta = _run(home, inputs)
    assert meta["providers"]["ecb_local"]["not_modified"] == 1 and meta["files_new"] == 0
    assert (home / "landing" / MANIFEST).read_text() == manifest and _fx_rows(home) == rows

    # A server without validators sending the same bytes again: content-addressed, nothing new lands.
    (home / VALIDATORS).unlink()
    httpserver.clear()
    _setup(httpserver, tmp_path)
    httpserver.expect_request(ZIP_PATH).respond_with_data(ecb_zip(), content_type="application/zip")
    meta = _run(home, inputs)
    assert meta["providers"]["ecb_local"] == {"provider": "ecb", "status": "ok", "pages": 1, "files_new": 0,
                                              "not_modified": 0, "error": None}
    assert (home / "landing" / MANIFEST).read_text() == manifest and _fx_rows(home) == rows

    # A corrupt zip: a named error, nothing landed, the rates landed before stay in force.
    httpserver.clear()
    _setup(httpserver, tmp_path)
    httpserver.expect_request(ZIP_PATH).respond_with_data(ecb_zip()[:200], content_type="application/zip")
    meta = _run(home, inputs)
    assert "ecb_local: " in meta["failed_providers"] and "corrupt zip (BadZipFile" in meta["failed_providers"]
    assert (home / "landing" / MANIFEST).read_text() == manifest and _fx_rows(home) == rows
