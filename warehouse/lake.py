"""The Parquet layer between the raw store and another SQL engine (docs/spark.md).

DuckDB stays the raw store of record: loads are transactional and idempotent per landed file
(replace by file hash), and the audit tables live beside them. For an engine that cannot open a
DuckDB file (Spark), `export_sources` keeps every raw and audit table as Parquet under
`<home>/lake/<schema>/<table>/`, one directory per dbt source; the dbt project registers those
directories as the sources on that engine (macro `register_lake_sources`).

The export is incremental: a raw table is one `<file_hash>.parquet` per landed file, and a refresh
writes only the files loaded since the last export (audit.file_loads.loaded_at, remembered per file
in `<lake>/_export.json`), so a night's export costs what the night loaded, not the history. Each
file is written under a hidden name and renamed into place; the state file is written last, so an
export that dies midway is redone (same names, same rows) by the next one.

`import_tables` brings the tables another engine built (Parquet under its warehouse directory)
back into the DuckDB ledger, so the checks, the publication and the dashboards read them exactly
as they read the DuckDB-built ones.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from warehouse.home import capped

LAKE_SCHEMAS = ("raw", "audit")
STATE_FILE = "_export.json"  # per table: its columns and, per landed file, the loaded_at last exported
SCHEMA_FILE = "part-schema.parquet"  # zero rows: a table's columns before any file is loaded


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _portable_select(con: duckdb.DuckDBPyConnection, catalog: str, schema: str,
                     table: str) -> tuple[str, list[list[str]]]:
    """The table's columns in types every Parquet reader agrees on, and its [name, type] pairs."""
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
    return ", ".join(items), [[name, dtype] for name, dtype in cols]


@dataclass
class LakeExport:
    """What one export changed, per `schema.table`: Parquet files written, files removed, rows written."""

    written: dict[str, list[str]] = field(default_factory=dict)
    removed: dict[str, list[str]] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)


def _write(con: duckdb.DuckDBPyConnection, query: str, target: Path, params: list | None = None) -> int:
    """`query` as one Parquet file at `target`, renamed into place (a reader never sees half a file);
    returns its rows. The temporary name starts with a dot: Spark and Hadoop skip such files."""
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    rows = con.execute(f"copy ({query}) to '{tmp}' (format parquet, compression zstd)", params or []).fetchone()[0]
    os.replace(tmp, target)
    return int(rows)


def _loads(con: duckdb.DuckDBPyConnection) -> dict[str, str] | None:
    """Landed file hash -> when it was last loaded (audit.file_loads); None if the ledger has no such column."""
    cols = {r[0] for r in con.execute(
        "select column_name from information_schema.columns where table_catalog = 'ledger' "
        "and table_schema = 'audit' and table_name = 'file_loads'").fetchall()}
    if not {"file_hash", "loaded_at"} <= cols:
        return None
    return {h: str(at) for h, at in con.execute(
        "select file_hash, max(loaded_at) from ledger.audit.file_loads where loaded_at is not null group by 1"
    ).fetchall()}


def _export_per_file(con: duckdb.DuckDBPyConnection, schema: str, table: str, select: str, target: Path,
                     loads: dict[str, str], done: dict[str, str], out: LakeExport) -> dict[str, str]:
    """Bring `target` (one `<file_hash>.parquet` per landed file with rows in the table) up to date:
    files loaded (again) since they were exported are written, files no longer loaded removed.
    `done` is file hash -> loaded_at as of the last export; returns it as of this one."""
    key = f"{schema}.{table}"
    source = f"ledger.{_q(schema)}.{_q(table)}"
    schema_file = target / SCHEMA_FILE
    if not schema_file.exists():  # zero rows, the columns: the table can be declared before any load
        _write(con, f"select {select} from {source} limit 0", schema_file)
        out.written.setdefault(key, []).append(SCHEMA_FILE)
    changed = sorted(h for h, at in loads.items() if done.get(h) != at)
    with_rows: set[str] = set()
    if changed:  # one scan, of the changed files' rows only (a Parquet-backed table prunes by statistics)
        with_rows = {r[0] for r in con.execute(
            f"select distinct _file_hash from {source} where _file_hash in (select unnest(?))", [changed]).fetchall()}
    for file_hash in changed:
        part = target / f"{file_hash}.parquet"
        if file_hash in with_rows:
            rows = _write(con, f"select {select} from {source} where _file_hash = ?", part, [file_hash])
            out.written.setdefault(key, []).append(part.name)
            out.rows[key] = out.rows.get(key, 0) + rows
        elif part.exists():  # loaded again without rows in this table
            part.unlink()
            out.removed.setdefault(key, []).append(part.name)
    # Whatever else lies here is the export of a file no longer loaded (or of the old full snapshot).
    keep = {f"{h}.parquet" for h in loads} | {SCHEMA_FILE}
    for stale in sorted(p for p in target.iterdir() if p.name not in keep):
        stale.unlink()
        out.removed.setdefault(key, []).append(stale.name)
    return {h: loads[h] for h in loads}


def export_sources(db_path: Path, lake_dir: Path) -> LakeExport:
    """Bring the Parquet lake up to date with the ledger's raw and audit tables (see the module doc).

    A table that says which landed file each row came from (`_file_hash`: every raw table) is kept
    as one Parquet file per landed file, and only files loaded since the last export are written
    (audit.file_loads.loaded_at; a file loaded again, e.g. after its rows were replaced, is written
    again, and the export of a file no longer loaded is removed). Any other table (the audit
    bookkeeping, a few thousand rows) is written whole, as one file, each time.
    """
    lake_dir.mkdir(parents=True, exist_ok=True)
    state_path = lake_dir / STATE_FILE
    state = json.loads(state_path.read_text()) if state_path.exists() else {}
    new_state: dict[str, dict] = {}
    out = LakeExport()
    con = capped(duckdb.connect())
    try:
        con.execute("set TimeZone = 'UTC'")
        con.execute(f"attach '{db_path}' as ledger (read_only)")
        # A raw view is a table kept as Parquet files (warehouse/raw_files.py): exported like the others.
        tables = con.execute(
            "select table_schema, table_name from information_schema.tables where table_catalog = 'ledger' "
            "and table_schema in ? and (table_type = 'BASE TABLE' or table_schema = 'raw') order by 1, 2",
            [list(LAKE_SCHEMAS)],
        ).fetchall()
        loads = _loads(con)
        for schema, table in tables:
            key, target = f"{schema}.{table}", lake_dir / schema / table
            select, columns = _portable_select(con, "ledger", schema, table)
            before = state.get(key, {})
            if before.get("columns") != columns:  # new table or new columns: every file again, in the new shape
                shutil.rmtree(target, ignore_errors=True)
                before = {}
            target.mkdir(parents=True, exist_ok=True)
            if loads is not None and "_file_hash" in {c for c, _ in columns}:
                files = _export_per_file(con, schema, table, select, target, loads, before.get("files", {}), out)
                new_state[key] = {"columns": columns, "files": files}
                continue
            out.rows[key] = _write(con, f"select {select} from ledger.{_q(schema)}.{_q(table)}",
                                   target / "part-0.parquet")
            out.written[key] = ["part-0.parquet"]
            for stale in (p for p in target.iterdir() if p.name != "part-0.parquet"):
                stale.unlink()
            new_state[key] = {"columns": columns}
    finally:
        con.close()
    for schema in LAKE_SCHEMAS:  # tables the ledger no longer has
        for folder in (lake_dir / schema).glob("*"):
            if f"{schema}.{folder.name}" not in new_state:
                shutil.rmtree(folder)
    tmp = state_path.with_name(f".{STATE_FILE}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(new_state, indent=1, sort_keys=True))
    os.replace(tmp, state_path)  # last: a crash before it exports the same files again next time
    return out


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
