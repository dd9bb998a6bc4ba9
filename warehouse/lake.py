"""The Parquet layer between the raw store and another SQL engine (docs/spark.md).

DuckDB stays the raw store of record: loads are transactional and idempotent per landed file
(replace by file hash), and the audit tables live beside them. For an engine that cannot open a
DuckDB file (Spark), `export_sources` writes every raw and audit table as Parquet under
`<home>/lake/<schema>/<table>/`, one directory per dbt source; the dbt project registers those
directories as the sources on that engine (macro `register_lake_sources`). The export is a full,
atomic snapshot per refresh: written beside the lake and renamed into place, so a reader sees the
previous snapshot or the new one, never a mix.

`import_tables` brings the tables another engine built (Parquet under its warehouse directory)
back into the DuckDB ledger, so the checks, the publication and the dashboards read them exactly
as they read the DuckDB-built ones.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb

LAKE_SCHEMAS = ("raw", "audit")


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _portable_select(con: duckdb.DuckDBPyConnection, catalog: str, schema: str, table: str) -> str:
    """The table's columns in types every Parquet reader agrees on."""
    cols = con.execute(
        "select column_name, data_type from information_schema.columns "
        "where table_catalog = ? and table_schema = ? and table_name = ? order by ordinal_position",
        [catalog, schema, table],
    ).fetchall()
    items = []
    for name, dtype in cols:
        dtype = dtype.upper()
        if dtype in ("JSON", "UUID"):
            items.append(f"cast({_q(name)} as varchar) as {_q(name)}")
        elif dtype == "TIMESTAMP":
            # Raw timestamps are naive UTC; written as UTC instants they read as timestamps on Spark.
            items.append(f"cast({_q(name)} as timestamptz) as {_q(name)}")
        elif dtype == "HUGEINT":
            items.append(f"cast({_q(name)} as decimal(38, 0)) as {_q(name)}")
        else:
            items.append(_q(name))
    return ", ".join(items)


def export_sources(db_path: Path, lake_dir: Path) -> dict[str, int]:
    """Write every raw and audit table of the ledger as Parquet; returns rows per `schema.table`."""
    tmp = lake_dir.with_name(f".{lake_dir.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    counts: dict[str, int] = {}
    con = duckdb.connect()
    try:
        con.execute("set TimeZone = 'UTC'")
        con.execute(f"attach '{db_path}' as ledger (read_only)")
        # A raw view is a table kept as Parquet files (warehouse/raw_files.py): exported like the others.
        tables = con.execute(
            "select table_schema, table_name from information_schema.tables where table_catalog = 'ledger' "
            "and table_schema in ? and (table_type = 'BASE TABLE' or table_schema = 'raw') order by 1, 2",
            [list(LAKE_SCHEMAS)],
        ).fetchall()
        for schema, table in tables:
            target = tmp / schema / table
            target.mkdir(parents=True)
            select = _portable_select(con, "ledger", schema, table)
            con.execute(
                f"copy (select {select} from ledger.{_q(schema)}.{_q(table)}) "
                f"to '{target / 'part-0.parquet'}' (format parquet, compression zstd)"
            )
            counts[f"{schema}.{table}"] = con.execute(
                f"select count(*) from ledger.{_q(schema)}.{_q(table)}").fetchone()[0]
    finally:
        con.close()
    old = lake_dir.with_name(f".{lake_dir.name}.{os.getpid()}.old")
    if lake_dir.exists():
        os.replace(lake_dir, old)
    os.replace(tmp, lake_dir)
    shutil.rmtree(old, ignore_errors=True)
    return counts


def import_tables(warehouse_dir: Path, db_path: Path, schema: str = "marts") -> dict[str, int]:
    """Replace `schema` in the ledger with the tables another engine wrote under `<schema>.db/`.

    Spark writes one directory of part files per table. Timestamps come back as naive UTC, the
    warehouse convention. All or nothing: one transaction.
    """
    source = warehouse_dir / f"{schema}.db"
    if not source.is_dir():
        raise FileNotFoundError(f"no tables were built in {source}")
    tables = sorted(p for p in source.iterdir() if p.is_dir() and any(p.glob("*.parquet")))
    con = duckdb.connect(str(db_path))
    counts: dict[str, int] = {}
    try:
        con.execute("set TimeZone = 'UTC'")
        con.execute("begin")
        con.execute(f"drop schema if exists {_q(schema)} cascade")
        con.execute(f"create schema {_q(schema)}")
        for path in tables:
            scan = f"read_parquet('{path}/*.parquet')"
            cols = con.execute(f"describe select * from {scan}").fetchall()
            items = [
                f"cast({_q(c[0])} as timestamp) as {_q(c[0])}" if c[1].upper().startswith("TIMESTAMP") else _q(c[0])
                for c in cols
            ]
            con.execute(f"create table {_q(schema)}.{_q(path.name)} as select {', '.join(items)} from {scan}")
            counts[path.name] = con.execute(f"select count(*) from {_q(schema)}.{_q(path.name)}").fetchone()[0]
        con.execute("commit")
    except Exception:
        con.execute("rollback")
        raise
    finally:
        con.close()
    return counts
