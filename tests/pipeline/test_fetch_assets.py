"""`fetch/prices` and `fetch/api_spend` materialized in process against pytest-httpserver (127.0.0.1)."""

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg
import duckdb
import yaml

from pipelines.defs.ingest.assets import RAW_ASSETS, landing_inputs
from pipelines.defs.ingest.fetch import API_SPEND_KEY, PRICES_KEY, fetch_api_spend, fetch_prices, public_url
from warehouse.landing import MANIFEST, read_manifest
from pipelines.resources import LedgerResource, refresh_lock_resource
from sources.catalog import recognise
from tests.conftest import SAMPLES

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "prices"
GCP_PAGE = SAMPLES / "prices" / "gcp_cloudbilling_skus_api_sample.json"
RAW = {a.key.path[1]: a for a in RAW_ASSETS}
FAST = {"timeout_s": 5, "max_retries": 1, "backoff_s": 0.01, "max_backoff_s": 0.02}


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, inputs = tmp_path / "home", tmp_path / "inputs"
    (inputs / "registry").mkdir(parents=True)
    return home, inputs


def _materialize(assets: list, home: Path, inputs: Path) -> dg.ExecuteInProcessResult:
    result = dg.materialize(assets, resources={"ledger": LedgerResource(home=str(home), inputs=str(inputs)),
                                               "refresh_lock": refresh_lock_resource})
    assert result.success
    return result


def _check(result: dg.ExecuteInProcessResult, key: dg.AssetKey) -> dg.AssetCheckEvaluation:
    (evaluation,) = [e for e in result.get_asset_check_evaluations() if e.asset_key == key]
    return evaluation


def _metadata(result: dg.ExecuteInProcessResult, key: dg.AssetKey) -> dict:
    (mat,) = [m for m in result.get_asset_materialization_events() if m.asset_key == key]
    return {k: v.value for k, v in mat.materialization.metadata.items()}


def _price_rows(home: Path) -> dict[str, int]:
    con = duckdb.connect(str(home / "ledger.duckdb"), read_only=True)
    try:
        return dict(con.execute(
            "select source_format, count(*) from raw.gpu_price_observations group by all").fetchall())
    finally:
        con.close()


def _parsed_rows(*paths: Path) -> int:
    """Rows the parsers give for the recorded pages themselves (what the fetched copies must load)."""
    total = 0
    for path in paths:
        output = recognise(path, "prices").parse(path, fetched_at=datetime.now(UTC))
        total += output.tables["gpu_price_observations"].num_rows
    return total


def _serve_prices(httpserver, azure_status: int = 200) -> None:
    page1 = json.loads((FIX / "azure_retail_prices_page1.json").read_text())
    page1["NextPageLink"] = httpserver.url_for("/azure/prices") + "?$skip=5"
    if azure_status == 200:
        httpserver.expect_request("/azure/prices", query_string={"$filter": "gpu"}).respond_with_json(page1)
    else:
        httpserver.expect_request("/azure/prices").respond_with_data("upstream down", status=azure_status)
    httpserver.expect_request("/azure/prices", query_string={"$skip": "5"}).respond_with_data(
        (FIX / "azure_retail_prices_page2.json").read_bytes(), content_type="application/json")
    httpserver.expect_request("/gcp/skus").respond_with_data(GCP_PAGE.read_bytes(), content_type="application/json")
    httpserver.expect_request("/broken").respond_with_data("internal error", status=500)


def _price_config(httpserver, inputs: Path) -> None:
    sources = [
        {"name": "azure_local", "provider": "azure", "format": "azure_retail_prices", "enabled": True,
         "url": httpserver.url_for("/azure/prices"), "params": {"$filter": "gpu"}, "paging": "azure_next_page_link"},
        {"name": "gcp_local", "provider": "gcp", "format": "gcp_cloudbilling_skus", "enabled": True,
         "url": httpserver.url_for("/gcp/skus")},
        {"name": "broken_local", "provider": "examplecloud", "format": "html_pricing_table", "enabled": True,
         "url": httpserver.url_for("/broken")},
        {"name": "disabled_local", "provider": "oci", "format": "oci_pricelist", "enabled": False,
         "url": httpserver.url_for("/disabled")},
    ]
    (inputs / "registry" / "price_sources.yaml").write_text(yaml.safe_dump({"defaults": FAST, "sources": sources}))


def test_fetch_prices_lands_pages_loads_raw_and_reports_the_failed_provider(httpserver, tmp_path) -> None:
    home, inputs = _dirs(tmp_path)
    _serve_prices(httpserver)
    _price_config(httpserver, inputs)
    assets = [landing_inputs, fetch_prices, RAW["prices"]]
    before = datetime.now(UTC).replace(microsecond=0)
    result = _materialize(assets, home, inputs)
    after = datetime.now(UTC) + timedelta(seconds=1)

    landed = [f for f in read_manifest(home / "landing") if f.family == "prices"]
    assert sorted(f.origin for f in landed) == sorted([
        httpserver.url_for("/azure/prices") + "?%24filter=gpu",
        httpserver.url_for("/azure/prices") + "?$skip=5",
        httpserver.url_for("/gcp/skus"),
    ])
    assert {f.http_status for f in landed} == {200}
    for f in landed:
        fetched = datetime.strptime(f.observed_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        assert before <= fetched <= after
        assert (home / "landing" / f.landed_path).is_file() and f.landed_path.startswith(f"prices/{f.sha256}")
    # The override config is configuration, not a registry input: it is never landed.
    assert not [f for f in read_manifest(home / "landing") if f.family == "registry"]
    assert not [r for r, _ in httpserver.log if r.path == "/disabled"]

    rows = _price_rows(home)
    assert rows == {"azure_retail_prices": _parsed_rows(FIX / "azure_retail_prices_page1.json",
                                                        FIX / "azure_retail_prices_page2.json"),
                    "gcp_cloudbilling_skus": _parsed_rows(GCP_PAGE)}
    check = _check(result, PRICES_KEY)
    assert not check.passed and check.severity == dg.AssetCheckSeverity.WARN
    meta = _metadata(result, PRICES_KEY)
    assert "broken_local" in meta["failed_providers"] and "HTTP 500" in meta["failed_providers"]
    assert meta["providers"]["azure_local"]["pages"] == 2 and meta["files_new"] == 3

    # Same bytes again: nothing new lands, nothing is reloaded.
    manifest = (home / "landing" / MANIFEST).read_text()
    again = _materialize(assets, home, inputs)
    assert (home / "landing" / MANIFEST).read_text() == manifest
    assert _metadata(again, PRICES_KEY)["files_new"] == 0
    assert _price_rows(home) == rows

    # Azure now fails too: its last landed prices stay, and the run still succeeds.
    httpserver.clear()
    _serve_prices(httpserver, azure_status=503)
    failed = _materialize(assets, home, inputs)
    assert "azure_local" in _metadata(failed, PRICES_KEY)["failed_providers"]
    assert not _check(failed, PRICES_KEY).passed
    assert _price_rows(home) == rows


def test_nothing_enabled_is_a_cheap_no_op(tmp_path) -> None:
    home, inputs = _dirs(tmp_path)
    result = _materialize([fetch_prices, fetch_api_spend], home, inputs)  # the repository's config
    for key in (PRICES_KEY, API_SPEND_KEY):
        meta = _metadata(result, key)
        assert "nothing fetched" in meta["status"] and meta["files_fetched"] == 0
        assert _check(result, key).passed
    assert not (home / "landing" / MANIFEST).exists()


def _api_config(inputs: Path, base_url: str, key_env: str) -> None:
    doc = {"defaults": {"lookback_days": 3, "max_retries": 1, "backoff_s": 0.01, "max_wait_s": 0.02},
           "sources": [{"name": "openai_costs", "provider": "openai", "endpoint": "costs", "enabled": True,
                        "key_env": key_env, "base_url": base_url}]}
    (inputs / "registry" / "api_spend_sources.yaml").write_text(yaml.safe_dump(doc))


def test_fetch_api_spend_only_with_the_key_and_never_stores_it(httpserver, tmp_path, monkeypatch) -> None:
    home, inputs = _dirs(tmp_path)
    key_env, secret = "GPU_LEDGER_TEST_OPENAI_KEY", "sk-admin-do-not-store-123"
    _api_config(inputs, httpserver.url_for("/v1"), key_env)
    page = (SAMPLES / "api_spend" / "openai_costs_api_response_example.json").read_bytes()
    httpserver.expect_request("/v1/organization/costs").respond_with_data(page, content_type="application/json")
    assets = [landing_inputs, fetch_api_spend, RAW["api_spend"]]

    monkeypatch.delenv(key_env, raising=False)
    skipped = _materialize(assets, home, inputs)
    assert _metadata(skipped, API_SPEND_KEY)["providers"]["openai_costs"]["status"] == "skipped"
    assert not httpserver.log

    monkeypatch.setenv(key_env, secret)
    result = _materialize(assets, home, inputs)
    assert httpserver.log[0][0].headers["Authorization"] == f"Bearer {secret}"
    (landed,) = [f for f in read_manifest(home / "landing") if f.family == "api_spend"]
    assert landed.origin.startswith(httpserver.url_for("/v1/organization/costs") + "?start_time=")
    assert landed.http_status == 200
    assert secret not in (home / "landing" / MANIFEST).read_text()
    assert secret.encode() not in (home / "landing" / landed.landed_path).read_bytes()
    assert secret not in json.dumps(_metadata(result, API_SPEND_KEY), default=str)
    assert _check(result, API_SPEND_KEY).passed
    con = duckdb.connect(str(home / "ledger.duckdb"), read_only=True)
    try:
        assert con.execute("select count(*) from raw.api_cost_buckets").fetchone()[0] == 1
    finally:
        con.close()


def test_public_url_hides_credential_parameters() -> None:
    assert public_url("https://x.test/skus?currencyCode=USD&key=abc") == "https://x.test/skus?currencyCode=USD&key=%2A%2A%2A"
    plain = "https://prices.azure.com/api/retail/prices?$filter=serviceName eq 'VM'"
    assert public_url(plain) == plain
