"""Where the dbt transforms run: the embedded DuckDB file, or Apache Spark.

The ingest, the checks and the publication always work on the DuckDB ledger. For Spark, the raw and
audit tables are exported to the Parquet lake before `dbt build --target spark`, and the marts Spark
built are imported back into the ledger afterwards (warehouse/lake.py). The locations are derived
from the warehouse home (`warehouse.home.Home`) and reach dbt as vars, never through the environment:

    <home>/lake/<schema>/<table>/          Parquet the Spark sources read (var lake_dir)
    <home>/spark/warehouse/<schema>.db/    tables Spark builds (var spark_dir)

Spark runs in the dbt process (dbt-spark's `session` method) with the master the run names (var
spark_master): a local Spark by default, or a standalone cluster (`spark://host:port`,
pipelines/spark_cluster.py), whose executors then read the lake and write the warehouse: both paths
must be storage every worker reads (docs/spark.md).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from warehouse.home import Home
from warehouse.lake import export_sources, import_tables

ENGINES = ("duckdb", "spark")
SPARK_MASTERS = ("spark://", "local")  # a standalone cluster, or Spark inside the dbt process


def engine_problem(engine: str, spark_master: str | None = None) -> str | None:
    """Why this engine choice cannot run (one line), or None."""
    if engine not in ENGINES:
        return f"--engine {engine}: expected one of {', '.join(ENGINES)}"
    if spark_master is not None and engine != "spark":
        return f"--spark-master {spark_master}: only with --engine spark"
    if spark_master is not None and not spark_master.startswith(SPARK_MASTERS):
        return f"--spark-master {spark_master}: expected spark://HOST:PORT or local[N]"
    return None


def prepare_engine(engine: str, home: Path, db_path: Path, spark_master: str | None = None) -> dict[str, str]:
    """Get the engine ready for `dbt build`; returns the dbt vars its profile and sources read.

    dbt runs inside the home (`gpu-ledger-dbt --in HOME`), so the ledger is given relative to it:
    the same vars in every home keep dbt's parse reusable (pipelines/dbt_entry.py).
    """
    paths = Home(home)
    ledger = os.path.relpath(db_path, home)
    if engine == "duckdb":
        return {"ledger_db": ledger}
    if engine != "spark":
        raise ValueError(f"unknown engine {engine!r}; expected one of {ENGINES}")
    if problem := engine_problem(engine, spark_master):
        raise ValueError(problem)
    export_sources(db_path, paths.lake)
    # Session mode keeps its catalog in memory: every build starts from an empty warehouse.
    shutil.rmtree(paths.spark / "warehouse", ignore_errors=True)
    paths.spark.mkdir(parents=True, exist_ok=True)
    dbt_vars = {"ledger_db": ledger, "lake_dir": str(paths.lake), "spark_dir": str(paths.spark)}
    return {**dbt_vars, "spark_master": spark_master} if spark_master else dbt_vars


def publish_engine_marts(engine: str, home: Path, db_path: Path) -> dict[str, int]:
    """Bring the marts another engine built into the ledger; rows per table ({} on DuckDB)."""
    if engine == "duckdb":
        return {}
    return import_tables(Home(home).spark / "warehouse", db_path, schema="marts")
