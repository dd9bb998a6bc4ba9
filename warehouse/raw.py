"""Loads parser output into `raw.*` tables according to `warehouse/contracts/*.yaml`.

Idempotent by construction: a landed file's rows are replaced in one transaction (a table the
contract stores as Parquet files is renamed into place once it commits: warehouse/raw_files.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any, Self

import duckdb
import pyarrow as pa
import yaml

from sources.common import BatchedParse, ParseOutput, StreamEnd
from warehouse.raw_files import (
    FileTableLoad,
    database_file,
    ensure_file_table,
    file_table_current,
    files_folder,
    folder_of,
    load_time,
    raw_schema,
    remove_leftovers,
)

LOG = logging.getLogger(__name__)
CONTRACTS_DIR = Path(__file__).resolve().parent / "contracts"
LINEAGE_COLUMNS = {
    "_file_hash": "VARCHAR",
    "_source_file": "VARCHAR",
    "_source_line": "BIGINT",
    "_format": "VARCHAR",
    "_loaded_at": "TIMESTAMP",
}


class ContractError(Exception):
    """Parser output does not match its raw table contract."""


@cache
def contracts() -> dict[str, dict[str, Any]]:
    """Every raw table contract, keyed by table name."""
    merged: dict[str, dict[str, Any]] = {}
    for path in sorted(CONTRACTS_DIR.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text()) or {}
        for name, spec in (doc.get("tables") or {}).items():
            if name in merged:
                raise ContractError(f"raw table {name!r} is declared twice (second time in {path.name})")
            merged[name] = {**spec, "family": doc.get("family", path.stem)}
    return merged


def contract_columns(table: str) -> dict[str, str]:
    """Contract columns (name -> DuckDB type) of one raw table, lineage columns excluded."""
    try:
        return dict(contracts()[table]["columns"])
    except KeyError as exc:
        raise ContractError(f"no contract declares raw table {table!r}") from exc


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def ensure_raw_table(con: duckdb.DuckDBPyConnection, table: str) -> None:
    """Create `raw.<table>` from its contract if it does not exist yet (a view over its Parquet
    files when the contract says `storage: parquet` and the ledger is a file; warehouse/raw_files.py)."""
    cols = {**contract_columns(table), **LINEAGE_COLUMNS}
    folder = _files_folder(con, table)
    if folder is not None:
        if ensure_file_table(con, table, folder, cols):
            _forget_family_loads(con, table, folder)
        return
    ddl = ", ".join(f"{_quote(c)} {t}" for c, t in cols.items())
    con.execute("create schema if not exists raw")
    con.execute(f"create table if not exists raw.{_quote(table)} ({ddl})")
    _add_new_columns(con, table, cols)


def _add_new_columns(con: duckdb.DuckDBPyConnection, table: str, cols: dict[str, str]) -> None:
    """A raw table created under an older contract gains the columns the contract added since, NULL in
    its old rows: a load names every contract column, so without them the family's next file would fail."""
    have = {r[0] for r in con.execute(
        "select column_name from information_schema.columns where table_catalog = current_database() "
        "and table_schema = 'raw' and table_name = ?", [table]).fetchall()}
    for col, typ in cols.items():
        if col not in have:
            con.execute(f"alter table raw.{_quote(table)} add column {_quote(col)} {typ}")


def _forget_family_loads(con: duckdb.DuckDBPyConnection, table: str, folder: Path) -> None:
    """The files of `table` were deleted: forget the family's loads, so the next ingest loads every
    landed file of the family again (landing/ keeps them) instead of leaving the rows quietly gone."""
    family = contracts()[table]["family"]
    has_audit = con.execute("select count(*) from information_schema.tables where table_catalog = current_database() "
                            "and table_schema = 'audit' and table_name = 'file_loads'").fetchone()[0]
    if has_audit:
        con.execute("delete from audit.file_loads where family = ?", [family])
    LOG.warning("%s is gone (raw.%s lost its rows): every landed %s file will be loaded again", folder, table, family)


def _files_folder(con: duckdb.DuckDBPyConnection, table: str) -> Path | None:
    if contracts()[table].get("storage") != "parquet":
        return None
    return files_folder(con, table)


def ensure_all_raw_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Create every contracted raw table, so dbt sources exist even before their first file.

    The raw schema is read once: a table that already has every contract column, or a view already
    over its folder, costs no query. Each family's ingest calls this (seven per full refresh), and
    asking per table was ~4 queries each, ~0.17 s per call for 27 tables."""
    db = database_file(con)
    present = raw_schema(con)
    for table in contracts():
        kind, sql, have = present.get(table, (None, None, set()))
        folder = folder_of(db, table) if contracts()[table].get("storage") == "parquet" else None
        if folder is not None:
            if not file_table_current(folder, kind, sql):
                ensure_raw_table(con, table)
            remove_leftovers(folder)
        elif kind != "BASE TABLE" or not set({**contract_columns(table), **LINEAGE_COLUMNS}) <= have:
            ensure_raw_table(con, table)


def check_contract(table: str, data: pa.Table) -> None:
    """Raise ContractError when the parser produced columns the contract does not declare."""
    allowed = set(contract_columns(table)) | {"_source_line"}
    extra = [c for c in data.column_names if c not in allowed]
    if extra:
        raise ContractError(f"raw.{table}: parser produced undeclared columns {extra}")


def insert_rows(
    con: duckdb.DuckDBPyConnection,
    table: str,
    data: pa.Table,
    *,
    file_hash: str,
    source_file: str,
    fmt: str,
    ensure: bool = True,
) -> int:
    """Insert one parsed table (no transaction handling; see `replace_file`). `ensure=False`: the
    caller has created the raw tables on this connection already (`ensure_all_raw_tables`)."""
    check_contract(table, data)
    if ensure:
        ensure_raw_table(con, table)
    cols = contract_columns(table)
    present = set(data.column_names)
    con.register("_incoming", data)
    try:
        select = []
        for col, typ in cols.items():
            select.append(f"cast({_quote(col)} as {typ})" if col in present else f"cast(null as {typ})")
        line = "cast(_source_line as bigint)" if "_source_line" in present else "cast(null as bigint)"
        names = ", ".join(_quote(c) for c in [*cols, *LINEAGE_COLUMNS])
        con.execute(
            f"insert into raw.{_quote(table)} ({names}) select {', '.join(select)}, "
            f"?, ?, {line}, ?, current_timestamp::timestamp from _incoming",
            [file_hash, source_file, fmt],
        )
    finally:
        con.unregister("_incoming")
    return data.num_rows


class _FileRows:
    """Replace one landed file's rows across its family's raw tables: DuckDB tables in one
    transaction, file-stored tables renamed into place after it commits (warehouse/raw_files.py)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, *, file_hash: str, source_file: str, fmt: str,
                 family: str, tables_ready: bool = False, prepared: dict[str, FileTableLoad] | None = None) -> None:
        self.con, self.file_hash, self.source_file, self.fmt = con, file_hash, source_file, fmt
        self.tables = [t for t, spec in contracts().items() if spec["family"] == family]
        # File-stored tables whose temporary file is written already (`prepare_file_batches`).
        self.files: dict[str, FileTableLoad] = dict(prepared or {})
        # The loader creates every raw table once per ingest (`ensure_all_raw_tables`); checking them
        # again for each file cost ~3 ms a table, 0.9 s for the 76 benchmark files of 256x30.
        self.tables_ready = tables_ready

    def __enter__(self) -> Self:
        for t in self.tables:
            if not self.tables_ready:
                ensure_raw_table(self.con, t)
            folder = None if t in self.files else _files_folder(self.con, t)
            if folder is not None:
                self.files[t] = FileTableLoad(self.con, t, folder, file_hash=self.file_hash,
                                              source_file=self.source_file, fmt=self.fmt)
        self.con.execute("begin transaction")
        try:
            for t in self.tables:
                if t not in self.files:
                    self.con.execute(f"delete from raw.{_quote(t)} where _file_hash = ?", [self.file_hash])
        except Exception:
            self.__exit__(Exception, None, None)
            raise
        return self

    def insert(self, table: str, data: pa.Table) -> int:
        if table in self.files:
            check_contract(table, data)
            return self.files[table].write(data)
        return insert_rows(self.con, table, data, file_hash=self.file_hash, source_file=self.source_file,
                           fmt=self.fmt, ensure=not self.tables_ready)

    def correct(self, table: str, drop_lines: list[int], rejected_lines: list[int]) -> int:
        """The parser's end-of-file corrections in a DuckDB table (see `replace_file_batches`; a
        file-stored table gets them in `prepare_file_batches`); returns rows dropped."""
        target = f"raw.{_quote(table)}"
        if drop_lines:
            self.con.execute(f"delete from {target} where _file_hash = ? and _source_line in (select unnest(?))",
                             [self.file_hash, drop_lines])
        if rejected_lines:
            # Row with provisional line p is on file line p + #{i : rejected[i] - i <= p}
            # (sources.common.provisional_to_file_lines): an ASOF join on the cumulative counts.
            steps = [line - i for i, line in enumerate(rejected_lines)]
            self.con.execute(
                f"update {target} as t set _source_line = t._source_line + s.shift from ("
                f"select r._source_line as line, c.shift from {target} as r asof join ("
                f"select step, max(k) as shift from (select step, row_number() over (order by step) as k "
                f"from unnest(?) as u(step)) group by step) as c on r._source_line >= c.step "
                f"where r._file_hash = ?) as s where t._file_hash = ? and t._source_line = s.line",
                [steps, self.file_hash, self.file_hash])
        return len(drop_lines)

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            try:
                self.con.execute("commit")
            except Exception:
                for load in self.files.values():
                    load.abort()
                raise
            for load in self.files.values():
                load.commit()
            return
        self.con.execute("rollback")
        for load in self.files.values():
            load.abort()


def replace_file(
    con: duckdb.DuckDBPyConnection,
    output: ParseOutput,
    *,
    file_hash: str,
    source_file: str,
    fmt: str,
    family: str,
    tables_ready: bool = False,
) -> int:
    """Replace every row of one landed file across its family's raw tables, atomically
    (`tables_ready`: `ensure_all_raw_tables` ran on this connection, see `_FileRows`)."""
    with _FileRows(con, file_hash=file_hash, source_file=source_file, fmt=fmt, family=family,
                   tables_ready=tables_ready) as rows:
        return sum(rows.insert(table, data) for table, data in output.tables.items())


def replace_file_batches(
    con: duckdb.DuckDBPyConnection,
    parsed: BatchedParse,
    *,
    file_hash: str,
    source_file: str,
    fmt: str,
    family: str,
    each: Callable[[pa.Table], pa.Table] = lambda t: t,
    tables_ready: bool = False,
) -> tuple[int, StreamEnd]:
    """`replace_file` for a parse in bounded batches: one transaction, one insert per batch (so
    memory holds one batch, not the file), then the parser's end-of-file corrections: delete the
    rows it dropped (duplicates) and move line numbers past the lines its reader rejected.
    `each` is applied to every batch before its insert (the credential scrub). A file-stored table
    takes the loader's read-ahead path in place: its file is written, then committed."""
    if not tables_ready:
        ensure_raw_table(con, parsed.table)
    target = file_target(con, parsed.table)
    if target is not None:
        prepared = prepare_file_batches(parsed, target, file_hash=file_hash, source_file=source_file, fmt=fmt,
                                        each=each)
        return commit_prepared(con, prepared, family=family, tables_ready=tables_ready), prepared.end
    with _FileRows(con, file_hash=file_hash, source_file=source_file, fmt=fmt, family=family,
                   tables_ready=tables_ready) as rows:
        loaded = sum(rows.insert(parsed.table, each(batch)) for batch in parsed.batches())
        end = parsed.finish()
        if end.drop_lines or end.rejected_lines:
            loaded -= rows.correct(parsed.table, end.drop_lines, end.rejected_lines)
    return loaded, end


@dataclass
class PreparedFile:
    """A batched parse already written to its table's temporary Parquet file (corrections applied),
    waiting for `commit_prepared`: no DuckDB work was done for it yet."""

    load: FileTableLoad
    table: str
    file_hash: str
    rows: int
    end: StreamEnd


@dataclass(frozen=True)
class FileTarget:
    """Where a file-stored raw table's rows of one landed file are written, and their `_loaded_at`:
    taken from the loader's connection, so that the write itself needs no database."""

    folder: Path
    loaded_at: datetime


def file_target(con: duckdb.DuckDBPyConnection, table: str) -> FileTarget | None:
    """The target of a load into `raw.<table>` when it is stored as Parquet files (None: a DuckDB
    table, loaded inside the transaction instead)."""
    folder = _files_folder(con, table)
    return None if folder is None else FileTarget(folder, load_time(con))


def prepare_file_batches(
    parsed: BatchedParse,
    target: FileTarget,
    *,
    file_hash: str,
    source_file: str,
    fmt: str,
    each: Callable[[pa.Table], pa.Table] = lambda t: t,
) -> PreparedFile:
    """The part of `replace_file_batches` that needs no database, for a file-stored table: parse,
    write the temporary file batch by batch, apply the end-of-file corrections. It runs in a worker
    thread (warehouse/ingest.py) while the loader commits the file before; nothing is visible until
    `commit_prepared` renames the file, and a failure removes it."""
    load = FileTableLoad(None, parsed.table, target.folder, file_hash=file_hash, source_file=source_file, fmt=fmt,
                         loaded_at=target.loaded_at)
    try:
        for batch in parsed.batches():
            batch = each(batch)
            check_contract(parsed.table, batch)
            load.write(batch)
        end = parsed.finish()
        load.correct(end.drop_lines, end.rejected_lines)
    except BaseException:
        load.abort()
        raise
    return PreparedFile(load, parsed.table, file_hash, load.rows, end)


def commit_prepared(
    con: duckdb.DuckDBPyConnection, prepared: PreparedFile, *, family: str, tables_ready: bool = False,
) -> int:
    """Replace the landed file's rows with a prepared file: the family's DuckDB tables lose the file's
    rows in one transaction, then the prepared file is renamed into place (as `_FileRows` does).
    If anything fails, the prepared file is removed and the file's old rows stay."""
    load = prepared.load
    try:
        with _FileRows(con, file_hash=prepared.file_hash, source_file=load.lineage["_source_file"],
                       fmt=load.lineage["_format"], family=family, tables_ready=tables_ready,
                       prepared={prepared.table: load}):
            pass
    except BaseException:
        load.abort()  # also when _FileRows failed before its transaction began
        raise
    return prepared.rows
