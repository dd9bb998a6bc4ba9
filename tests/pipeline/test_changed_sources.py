"""A night's new files select the models reading the raw tables they write, not their whole families.

pipelines/changed_sources.py learns before the run which raw tables the files not loaded yet will
write (their formats declare them: `SourceFormat.tables`); pipelines/refresh_state.py
`affected_assets` then selects the models reading those tables. A day of telemetry, Slurm
accounting and proxy logs writes gpu_samples, gpu_jobs and api_requests only: the readers of the
provider cost and usage buckets, the price catalog and the node inventory are left as they are.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from pipelines.changed_sources import pending_tables
from pipelines.definitions import defs
from pipelines.refresh_state import affected_assets
from sources.catalog import FAMILIES, formats_for
from tests.conftest import SAMPLES
from warehouse.home import Home
from warehouse.ingest import ingest_family
from warehouse.landing import land_inputs
from warehouse.raw import contracts

DECLARED = ("usage", "api_spend")  # the families whose formats name their tables
HELD = ("hb_jobinfo_sacct_snowman_delim.txt", "litellm_spend_logs_sample.csv")
RESTATED = Path("api_spend") / "openai_costs_api_response_example.json"
# Readers of tables a day of samples, jobs and proxy logs does not write.
UNTOUCHED = ("staging/stg_api_spend__cost_buckets", "staging/stg_api_spend__usage_buckets",
             "staging/stg_api_spend__model_prices", "staging/stg_usage__gpu_inventory",
             "marts/fct_api_cost_reports_daily", "marts/fct_api_prices")


def _keys(families: list[str], tables: dict[str, list[str] | None] | None) -> set[str]:
    return {k.to_user_string() for k in affected_assets(defs, families, tables)}


def test_a_day_of_samples_jobs_and_requests_leaves_the_other_tables_readers_alone() -> None:
    keys = _keys(["usage", "api_spend"], {"usage": ["gpu_jobs", "gpu_samples"], "api_spend": ["api_requests"]})
    for rebuilt in ("raw/usage", "raw/api_spend", "staging/stg_usage__gpu_samples", "staging/stg_usage__gpu_jobs",
                    "staging/stg_api_spend__requests", "intermediate/int_gpu_usage_hourly",
                    "marts/fct_chargeback_monthly", "serving/publication"):
        assert rebuilt in keys, rebuilt
    for kept in UNTOUCHED:
        assert kept not in keys, kept
    # Tables not known (None, or no answer for the family): every model of the family, as before.
    every = _keys(["usage", "api_spend"], {"usage": None})
    assert set(UNTOUCHED) <= every and keys < every
    assert _keys(["usage", "api_spend"], None) == every


def test_a_restated_cost_report_rebuilds_the_readers_of_its_table() -> None:
    keys = _keys(["api_spend"], {"api_spend": ["api_cost_buckets"]})
    assert {"staging/stg_api_spend__cost_buckets", "marts/fct_api_cost_reports_daily"} <= keys
    assert "staging/stg_api_spend__requests" not in keys and "staging/stg_api_spend__model_prices" not in keys


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The usage and api_spend samples but HELD landed and loaded into a new ledger; then HELD arrive,
    RESTATED is restated (new bytes, same name) and a file no format knows is added, all landed."""
    root = tmp_path_factory.mktemp("changed_sources")
    inputs, paths = root / "inputs", Home(root / "home").ensure()
    for family in DECLARED:
        shutil.copytree(SAMPLES / family, inputs / family, ignore=shutil.ignore_patterns(*HELD))
    land_inputs(inputs, paths.landing, FAMILIES)
    con = duckdb.connect(str(paths.ledger_db))
    try:
        for family in DECLARED:
            ingest_family(con, family, paths.landing, "first")
        written = {(table, fmt) for table, family in _raw_tables(con) if family in DECLARED
                   for (fmt,) in con.execute(f"select distinct _format from raw.{table}").fetchall()}
    finally:
        con.close()
    before = pending_tables(paths.root, list(DECLARED))
    for name in HELD:
        family = "usage" if name.startswith("hb_") else "api_spend"
        shutil.copy2(SAMPLES / family / name, inputs / family / name)
    (inputs / RESTATED).write_bytes((SAMPLES / RESTATED).read_bytes() + b"\n")
    (inputs / "usage" / "notes.csv").write_text("not,a,known\nformat,at,all\n")
    land_inputs(inputs, paths.landing, FAMILIES)
    return {"home": paths.root, "written": written, "before": before}


def _raw_tables(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """(raw table, family) of every raw table with a contract."""
    return [(table, contract.get("family", "")) for table, contract in contracts().items()
            if con.execute("select count(*) from information_schema.tables where table_schema = 'raw' "
                           "and table_name = ?", [table]).fetchone()[0]]


def test_every_format_writes_only_the_tables_it_declares(loaded: dict) -> None:
    declared = {f.name: set(f.tables) for family in DECLARED for f in formats_for(family)}
    assert loaded["written"], "the samples loaded no rows"
    for table, fmt in loaded["written"]:
        assert declared[fmt], f"{fmt} declares no tables"
        assert table in declared[fmt], f"{fmt} wrote {table}, not among its declared tables {sorted(declared[fmt])}"


def test_the_tables_of_the_files_not_loaded_yet(loaded: dict) -> None:
    # Nothing new since the load: no file to load, so no answer (every table of the family).
    assert loaded["before"] == {"usage": None, "api_spend": None}
    found = pending_tables(loaded["home"], ["usage", "api_spend", "registry", "billing"])
    # sacct -> gpu_jobs (the unknown file only adds an audit row); proxy log -> api_requests and the
    # restated cost report -> api_cost_buckets; the registry reloads whole; billing has nothing to load.
    assert found == {"usage": ["gpu_jobs"], "api_spend": ["api_cost_buckets", "api_requests"],
                     "registry": None, "billing": None}


def test_without_a_ledger_every_table_of_the_family(tmp_path: Path) -> None:
    assert pending_tables(tmp_path, ["usage"]) == {"usage": None}
