"""Where the dbt transforms run (issue 11): the embedded DuckDB file, or Apache Spark.

The ingest, the checks and the publication always work on the DuckDB ledger. For Spark, the raw and
audit tables are exported to the Parquet lake before `dbt build --target spark`, and the marts Spark
built are imported back into the ledger afterwards (pipelines/lake.py). The locations are derived
from the warehouse home, one place:

    <home>/lake/<schema>/<table>/          Parquet the Spark sources read (GPU_LEDGER_LAKE)
    <home>/spark/warehouse/<schema>.db/    tables Spark builds (GPU_LEDGER_SPARK_DIR)
"""

from __future__ import annotations

import shutil
from pathlib import Path

from warehouse.lake import export_sources, import_tables

ENGINES = ("duckdb", "spark")


def spark_dir(home: Path) -> Path:
    """The Spark session's directory under the warehouse home."""
    return home / "spark"


def prepare_engine(engine: str, home: Path, db_path: Path) -> dict[str, str]:
    """Get the engine ready for `dbt build`; returns the environment dbt's profile reads."""
    if engine == "duckdb":
        return {}
    if engine != "spark":
        raise ValueError(f"unknown engine {engine!r}; expected one of {ENGINES}")
    export_sources(db_path, home / "lake")
    # Session mode keeps its catalog in memory: every build starts from an empty warehouse.
    shutil.rmtree(spark_dir(home) / "warehouse", ignore_errors=True)
    spark_dir(home).mkdir(parents=True, exist_ok=True)
    return {
        "GPU_LEDGER_LAKE": str(home / "lake"),
        "GPU_LEDGER_SPARK_DIR": str(spark_dir(home)),
        # Spark binds its driver to loopback only (no traffic leaves the machine).
        "SPARK_LOCAL_IP": "127.0.0.1",
    }


def publish_engine_marts(engine: str, home: Path, db_path: Path) -> dict[str, int]:
    """Bring the marts another engine built into the ledger; rows per table ({} on DuckDB)."""
    if engine == "duckdb":
        return {}
    return import_tables(spark_dir(home) / "warehouse", db_path, schema="marts")
