"""New inputs of one family rebuild only what that family affects, and publish what a full build does.

The bundled samples without the LiteLLM spend log are refreshed into a new home; then the log
arrives and the next refresh runs only the assets it affects (pipelines/refresh_state.py
`affected_assets`: the api_spend load, the models downstream of it and of the audit tables, the
publication). Its publication must equal the full refresh of all the samples (the shared
`sample_run`), every published table, the check outcomes included (those of unaffected tables are
carried over from the publication in place).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from pipelines.cli import execute_refresh
from tests import prefetch
from tests.conftest import SAMPLES, published_tables
from tests.pipeline.test_incremental import assert_same_tables
from warehouse.status import read_status

pytestmark = pytest.mark.e2e
LATE = Path("api_spend") / "litellm_spend_logs_sample.csv"


def _dbt_nodes(home: Path) -> set[str]:
    results = json.loads((home / "dbt-target" / "run_results.json").read_text())["results"]
    return {r["unique_id"] for r in results}


def _checks(home: Path) -> tuple[set[tuple], tuple]:
    con = duckdb.connect(str(home / "serving.duckdb"), read_only=True)
    try:
        rows = set(con.execute("select check_name, target, severity, status from check_results").fetchall())
        counts = con.execute("select checks_run, checks_passed, checks_warned, checks_failed from publication").fetchone()
    finally:
        con.close()
    return rows, counts


def build_runs(root: Path, sample_run: dict) -> dict:
    """The samples without the log, then with it, in one new home (a tests/prefetch.py job; after
    `sample_run`, whose publication the second must equal)."""
    assert sample_run["ok"], sample_run["reason"]
    inputs, home = root / "inputs", root / "home"
    shutil.copytree(SAMPLES, inputs, ignore=shutil.ignore_patterns(LATE.name))  # copy2: same mtimes
    first = execute_refresh(home, inputs, docs=False)
    first_nodes = _dbt_nodes(home)
    shutil.copy2(SAMPLES / LATE, inputs / LATE)
    second = execute_refresh(home, inputs, docs=False)
    return {"home": home, "first": first, "second": second, "first_nodes": first_nodes,
            "second_nodes": _dbt_nodes(home), "status": read_status(home)}


@pytest.fixture(scope="module")
def late_runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("incremental_selection", tmp_path_factory)


def test_only_what_the_new_file_affects_is_rebuilt(late_runs: dict) -> None:
    (ok1, _, reason1), (ok2, run2, reason2) = late_runs["first"], late_runs["second"]
    assert ok1, reason1
    assert ok2, reason2
    assert late_runs["status"]["message"] == "published" and late_runs["status"]["run_id"] == run2
    first, second = late_runs["first_nodes"], late_runs["second_nodes"]
    assert second < first  # a strict subset of the dbt nodes of a full build
    assert "model.gpu_ledger.stg_api_spend__requests" in second
    # A model no api_spend row nor audit row reaches is left as it is (its inputs did not change).
    assert "model.gpu_ledger.stg_prices__observations" in first - second


def test_the_publication_equals_a_full_build_of_the_same_inputs(late_runs: dict, sample_run: dict) -> None:
    incremental = published_tables(late_runs["home"] / "serving.duckdb")
    full = published_tables(sample_run["home"] / "serving.duckdb")
    assert_same_tables(incremental, full)


def test_every_check_is_published_with_the_outcome_of_a_full_build(late_runs: dict, sample_run: dict) -> None:
    rows, counts = _checks(late_runs["home"])
    full_rows, full_counts = _checks(sample_run["home"])
    assert rows == full_rows
    assert counts == full_counts and counts[0] == len(full_rows)
