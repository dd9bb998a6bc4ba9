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
    monkeypatch.setattr(docs, "ledger_dbt_executable", lambda: str(tmp_path / "no-such-dbt"))
    result = dg.materialize([dbt_docs], resources={"ledger": LedgerResource(home=str(tmp_path))})
    assert result.success
    (mat,) = result.get_asset_materialization_events()
    meta = mat.materialization.metadata
    assert meta["generated"].value is False and "did not run" in meta["message"].value
    assert not (tmp_path / "dbt-docs").exists()


def test_docs_not_requested_run_no_dbt_and_say_so(tmp_path, monkeypatch) -> None:
    """`generate: false` (execute_refresh(docs=False)): no dbt process at all, and the metadata says why."""
    monkeypatch.setattr(docs, "ledger_dbt_executable", lambda: pytest.fail("dbt started although not requested"))
    result = dg.materialize([dbt_docs], resources={"ledger": LedgerResource(home=str(tmp_path))},
                            run_config={"ops": {"serving__dbt_docs": {"config": {"generate": False}}}})
    assert result.success
    (mat,) = result.get_asset_materialization_events()
    meta = mat.materialization.metadata
    assert meta["generated"].value is False and "not requested" in meta["message"].value
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


def test_a_new_homes_first_build_starts_from_the_prepared_parse(sample_run: dict) -> None:
    """dbt runs inside the home with the relative ledger var (pipelines/dbt_entry.py), so the parse
    `gpu-ledger prepare` wrote under dbt/target is valid in a brand-new home: dbt says "Unable to do
    partial parsing because ..." (and parses the whole project, ~8.5 s) whenever vars or profile differ."""
    assert sample_run["ok"], sample_run["reason"]
    log = (sample_run["home"] / "logs" / "last_run.log").read_text()
    assert "Found " in log and " models, " in log, "no dbt parse summary in the run log"
    assert "Unable to do partial parsing" not in log


@pytest.mark.e2e
def test_docs_are_rebuilt_only_when_manifest_or_schema_changed(sample_run: dict, tmp_path) -> None:
    """A refresh that changes neither the dbt project nor the warehouse schema keeps the site on disk;
    a new column makes the next refresh regenerate it, and the catalog shows the column."""
    import shutil

    import duckdb

    assert sample_run["ok"], sample_run["reason"]
    home = tmp_path / "home"
    home.mkdir()
    for name in ("ledger.duckdb",):
        shutil.copy(sample_run["home"] / name, home / name)
    for folder in ("dbt-docs", "dbt-target"):
        shutil.copytree(sample_run["home"] / folder, home / folder)
    assert (home / "dbt-docs" / docs.INPUTS_FILE).read_text().strip() == docs.docs_inputs_key(home / "ledger.duckdb")
    before = (home / "dbt-docs" / "catalog.json").stat().st_mtime_ns

    def materialize() -> dict:
        result = dg.materialize([dbt_docs], resources={"ledger": LedgerResource(home=str(home))})
        assert result.success
        (mat,) = result.get_asset_materialization_events()
        return {k: v.value for k, v in mat.materialization.metadata.items()}

    same = materialize()
    assert same["generated"] is False and same["up_to_date"] is True and same["message"].startswith("unchanged")
    assert (home / "dbt-docs" / "catalog.json").stat().st_mtime_ns == before

    con = duckdb.connect(str(home / "ledger.duckdb"))
    con.execute("alter table marts.fct_chargeback_monthly add column x_note varchar")
    con.close()
    changed = materialize()
    assert changed["generated"] is True, changed["message"]
    catalog = json.loads((home / "dbt-docs" / "catalog.json").read_text())
    node = next(v for k, v in catalog["nodes"].items() if k.endswith(".fct_chargeback_monthly"))
    assert "x_note" in {c.lower() for c in node["columns"]}
    assert materialize()["generated"] is False  # and now it is current again
