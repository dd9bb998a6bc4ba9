"""The Spark lane: the bundled samples built on a Spark standalone cluster publish the same marts as
the DuckDB build, row for row, money to the cent.

The lane starts a cluster on this machine (pipelines/spark_cluster.py: a master and two workers of
one core each, from the locked pyspark, on 127.0.0.1) and runs the refresh as a cluster user would:
`gpu-ledger run --engine spark --spark-master spark://...`. dbt's process is the Spark driver; the
workers' executors read the Parquet lake and write the marts under the home, which every worker
reads (on one machine). The refresh runs on a copy of the DuckDB sample home, so the same landed
files and raw rows feed both engines (landing is idempotent: nothing is loaded twice); only the
transforms move to Spark. Needs Java 17 (scripts/ensure_java.sh) and pyspark.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import duckdb
import pytest

from pipelines.dbt_project import require_manifest
from tests import prefetch
from tests.compare import compare_marts, describe
from tests.conftest import SAMPLES, copy_home
from warehouse.lake import SCHEMA_FILE

pytestmark = [pytest.mark.spark, pytest.mark.e2e]

# Bookkeeping of the run itself, not marts: which checks ran differs by design (dbt unit tests
# run on the DuckDB lane only).
# Per-run bookkeeping; check_failures holds rows a test found, read back with the engine's own SQL.
NOT_COMPARED = {"publication", "check_results", "check_failures"}


def build_spark_run(root: Path, sample_run: dict) -> dict:
    """The Spark refresh, on a standalone cluster, of a copy of the DuckDB sample home (a
    tests/prefetch.py job). The cluster is stopped when the job ends, failed or not."""
    from pipelines.cli import execute_refresh
    from pipelines.spark_cluster import start_cluster

    assert sample_run["ok"], sample_run["reason"]
    # Without the DuckDB publication: the serving.duckdb compared below must be the Spark run's.
    home = copy_home(sample_run["home"], root / "spark_home", "serving.duckdb", "reports")
    began = time.monotonic()
    with start_cluster(root / "cluster", workers=2, cores=1, memory="2g") as cluster:
        started, pids = time.monotonic(), [p.pid for p in cluster.processes]
        ok, run_id, reason = execute_refresh(home, SAMPLES, engine="spark", spark_master=cluster.master_url,
                                             docs=False)
        master = cluster.state()
    return {"home": home, "ok": ok, "run_id": run_id, "reason": reason, "duckdb_home": sample_run["home"],
            "cluster": root / "cluster", "master": master, "pids": pids,
            "seconds": {"cluster_start": started - began, "refresh": time.monotonic() - started}}


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


def test_the_build_ran_on_the_cluster_workers(spark_run: dict) -> None:
    """The application ran on the standalone cluster, and both workers' executors ran its tasks."""
    master = spark_run["master"]
    assert master["status"] == "ALIVE" and master["aliveworkers"] == 2
    apps = master["activeapps"] + master["completedapps"]
    assert len(apps) == 1, apps  # the one dbt build (docs off), a client of this master
    finished = {}
    for worker in ("worker-0", "worker-1"):
        logs = list((spark_run["cluster"] / worker).glob(f"{apps[0]['id']}/*/stderr"))
        assert logs, f"no executor of {apps[0]['id']} ran on {worker}"
        finished[worker] = sum(p.read_text(errors="replace").count("Finished task") for p in logs)
    assert all(n > 0 for n in finished.values()), finished
    # The cluster was stopped when the job ended: none of its processes is left.
    alive = [pid for pid in spark_run["pids"] if _running(pid)]
    assert len(spark_run["pids"]) == 3 and alive == [], (spark_run["pids"], alive)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]


def test_the_lake_is_one_parquet_file_per_landed_file(spark_run: dict) -> None:
    """The raw lake Spark read: for every raw table, one `<file hash>.parquet` per landed file with
    rows in it (plus the zero-row schema file), holding exactly the ledger's rows."""
    lake = spark_run["home"] / "lake" / "raw"
    con = duckdb.connect(str(spark_run["home"] / "ledger.duckdb"), read_only=True)
    try:
        tables = [r[0] for r in con.execute(
            "select table_name from information_schema.tables where table_schema = 'raw' order by 1").fetchall()]
        checked = 0
        for table in tables:
            hashes = {r[0]: r[1] for r in con.execute(
                f'select _file_hash, count(*) from raw."{table}" group by 1').fetchall()}
            files = sorted(p.name for p in (lake / table).glob("*.parquet"))
            assert files == sorted([f"{h}.parquet" for h in hashes] + [SCHEMA_FILE]), table
            if hashes:
                in_lake = dict(duckdb.sql(f"select _file_hash, count(*) from read_parquet('{lake / table}/*.parquet') "
                                          f"group by 1").fetchall())
                assert in_lake == hashes, table
                checked += len(hashes)
    finally:
        con.close()
    assert len(tables) > 20 and checked > 50, (len(tables), checked)
