"""The Spark lane: the bundled samples built on Apache Spark publish the same marts as
the DuckDB build, row for row, money to the cent.

The Spark refresh runs on a copy of the DuckDB sample home, so the same landed files and raw rows
feed both engines (landing is idempotent: nothing is loaded twice); only the transforms move to
Spark (`gpu-ledger run --engine spark`). Needs Java 17 (scripts/ensure_java.sh) and pyspark.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from pipelines.dbt_project import require_manifest
from tests import prefetch
from tests.compare import compare_marts, describe
from tests.conftest import SAMPLES, copy_home

pytestmark = [pytest.mark.spark, pytest.mark.e2e]

# Bookkeeping of the run itself, not marts: which checks ran differs by design (dbt unit tests
# run on the DuckDB lane only).
# Per-run bookkeeping; check_failures holds rows a test found, read back with the engine's own SQL.
NOT_COMPARED = {"publication", "check_results", "check_failures"}


def build_spark_run(root: Path, sample_run: dict) -> dict:
    """The Spark refresh on a copy of the DuckDB sample home (a tests/prefetch.py job)."""
    from pipelines.cli import execute_refresh

    assert sample_run["ok"], sample_run["reason"]
    # Without the DuckDB publication: the serving.duckdb compared below must be the Spark run's.
    home = copy_home(sample_run["home"], root / "spark_home", "serving.duckdb", "reports")
    ok, run_id, reason = execute_refresh(home, SAMPLES, engine="spark", docs=False)
    return {"home": home, "ok": ok, "run_id": run_id, "reason": reason, "duckdb_home": sample_run["home"]}


@pytest.fixture(scope="module")
def spark_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("spark_run", tmp_path_factory)


def test_spark_refresh_publishes(spark_run: dict) -> None:
    assert spark_run["ok"], spark_run["reason"]
    assert (spark_run["home"] / "serving.duckdb").exists()
    # Spark built the marts: its warehouse holds one directory of Parquet part files per mart.
    built = {p.name for p in (spark_run["home"] / "spark" / "warehouse" / "marts.db").iterdir() if p.is_dir()}
    assert {"fct_chargeback_monthly", "fct_workload_unit_cost", "fct_candidate_comparison"} <= built


def test_spark_marts_equal_duckdb_marts(spark_run: dict) -> None:
    expected = spark_run["duckdb_home"] / "serving.duckdb"
    actual = spark_run["home"] / "serving.duckdb"
    diffs = [d for d in compare_marts(expected, actual, schema="main") if d.table not in NOT_COMPARED]
    assert len(diffs) >= 25, [d.table for d in diffs]
    assert all(d.equal for d in diffs), describe(diffs)
    # And not vacuously: the marts hold rows, the chargeback money among them.
    con = duckdb.connect(str(actual), read_only=True)
    try:
        totals = dict(con.execute(
            "select currency, sum(total_cost) from fct_chargeback_monthly group by currency").fetchall())
    finally:
        con.close()
    assert totals and all(v != 0 for v in totals.values())
    assert sum(d.row_counts[1] for d in diffs) > 1000


def test_spark_run_ran_its_checks(spark_run: dict) -> None:
    """The dbt tests ran on Spark (not skipped) and the GX suites validated the imported marts."""
    con = duckdb.connect(str(spark_run["home"] / "ledger.duckdb"), read_only=True)
    try:
        by_kind = dict(con.execute(
            "select case when target = 'dbt' then 'dbt' when check_name like 'gx_%' then 'gx' else 'other' end, "
            "count(*) from audit.check_results where run_id = ? group by 1", [spark_run["run_id"]]).fetchall())
        failed = con.execute(
            "select count(*) from audit.check_results where run_id = ? and status in ('fail', 'error')",
            [spark_run["run_id"]]).fetchone()[0]
        warned = {r[0] for r in con.execute(
            "select check_name from audit.check_results where run_id = ? and status = 'warn'",
            [spark_run["run_id"]]).fetchall()}
    finally:
        con.close()
    duck = duckdb.connect(str(spark_run["duckdb_home"] / "serving.duckdb"), read_only=True)
    try:
        duck_warned = {r[0] for r in duck.execute("select check_name from check_results where status = 'warn'").fetchall()}
    finally:
        duck.close()
    data_tests = sum(1 for n in json.loads(require_manifest().read_text())["nodes"].values()
                     if n["resource_type"] == "test")
    # every dbt test ran (134 of them since foreign keys ride on column_constraints; the floor only rules
    # out a manifest without tests)
    assert data_tests > 120 and by_kind.get("dbt", 0) == data_tests, (by_kind, data_tests)
    assert by_kind.get("gx", 0) > 20, by_kind
    assert failed == 0
    # Same data, same findings: Spark warns exactly where DuckDB warns (and the samples do warn).
    assert duck_warned and warned == duck_warned, (warned ^ duck_warned)


def test_spark_jvm_kept_its_jit(spark_run: dict) -> None:
    """The JVM's JIT compiled to the end: with C1 alone (dbt/profiles.yml) HotSpot reserves the client
    VM's 48 MB code cache, which a sample build filled, and a full cache disables the compiler (the rest
    of the build interpreted: ~20 % more CPU). The JVM's stderr reaches the run log."""
    log = (spark_run["home"] / "logs" / "last_run.log").read_text(errors="replace")
    assert "Using Spark's default log4j profile" in log  # the JVM's own stderr is in this log
    assert "CodeCache is full" not in log
