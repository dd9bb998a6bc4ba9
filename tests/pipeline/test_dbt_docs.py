"""dbt docs land in HOME/dbt-docs after a refresh; a docs failure never fails the refresh."""

import json

import dagster as dg
import pytest

from pipelines.defs.publish import docs
from pipelines.defs.publish.docs import DOCS_FILES, dbt_docs
from pipelines.resources import LedgerResource


@pytest.mark.e2e
def test_sample_run_writes_dbt_docs(sample_run: dict) -> None:
    assert sample_run["ok"], sample_run["reason"]
    out = sample_run["home"] / "dbt-docs"
    for name in DOCS_FILES:
        assert (out / name).is_file(), f"{name} missing from {out}"
    catalog = json.loads((out / "catalog.json").read_text())
    assert any(k.endswith(".fct_chargeback_monthly") for k in catalog["nodes"]), "catalog holds no mart"


def test_docs_failure_is_metadata_not_a_failed_run(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(docs, "dbt_executable", lambda: str(tmp_path / "no-such-dbt"))
    result = dg.materialize([dbt_docs], resources={"ledger": LedgerResource(home=str(tmp_path))})
    assert result.success
    (mat,) = result.get_asset_materialization_events()
    meta = mat.materialization.metadata
    assert meta["generated"].value is False and "did not run" in meta["message"].value
    assert not (tmp_path / "dbt-docs").exists()


def test_dbt_artifacts_live_in_the_home_not_the_repo(sample_run: dict) -> None:
    """dbt's target folder is HOME/dbt-target (one per home, partial parsing kept): a nightly refresh
    no longer leaves a ~30 MB folder per run under the repo's dbt/target."""
    assert sample_run["ok"], sample_run["reason"]
    target = sample_run["home"] / "dbt-target"
    assert (target / "run_results.json").is_file() and (target / "partial_parse.msgpack").is_file()
    import json

    results = json.loads((target / "run_results.json").read_text())["results"]
    assert any(r["unique_id"].startswith("model.") for r in results)
    assert not any(r["unique_id"].startswith("unit_test.") for r in results)  # left to the test suite
