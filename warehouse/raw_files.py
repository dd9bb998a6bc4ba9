"""Raw tables kept as Parquet files beside the ledger (contract `storage: parquet`).

The bulk table, raw.gpu_samples (a month of a 1,000-GPU fleet is 43M rows), cost 4-5x more to
insert into DuckDB's own storage than to write as Parquet: 0.75-1.0 s against 0.17 s for one
368,640-row day of 256 GPUs, while DuckDB aggregates both equally fast.
So such a table is one Parquet file per landed file, `<ledger>.raw/<table>/<file_hash>.parquet`,
and `raw.<table>` is a view over them: dbt sources, the GX suites, the lake export and the tests
query it as before.

The guarantees of a DuckDB table hold:
- A load replaces one landed file's rows: it writes `<hash>.parquet.tmp-<pid>` and renames it
  over `<hash>.parquet` once the DuckDB transaction of the same load has committed (one atomic
  rename). A failed load removes its temporary file; the old rows stay.
- A crash between that commit and the rename leaves the landed file without its audit row (the
  loader writes it afterwards), so the next run loads the file again.
- The folder belongs to its database: a database without the view yet (a new ledger) starts from
  an empty folder, and an older ledger's native table is moved into files once. A folder deleted
  under a ledger that still has the view makes the loader forget the family's loads, so the next
  ingest loads every landed file of it again (warehouse/raw.py).
- An in-memory database (unit tests, tools) has no folder, so its table stays a DuckDB table.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from sources.common import correct_lines

EMPTY_FILE = "_empty.parquet"  # zero rows, the contract's schema: the view works before any load
TMP_MARK = ".tmp-"
# DuckDB's row group size: readers prune and parallelise by row group.
ROW_GROUP_ROWS = 122_880
COMPRESSION = "snappy"  # zstd files are 25 % smaller but cost 20 % more to write; reads are alike
CONSTANT_STRINGS = ("_file_hash", "_source_file", "_format")  # one value per landed file
# Columns whose values are (nearly) all distinct, so a dictionary page never pays: the line number, an
# energy counter (it only grows) and a power reading (continuous). pyarrow builds a dictionary for every
# column by default and falls back to plain only once it is full; without these three, and with the min/max
# statistics kept only where readers prune (not strings: `in_days` and the file-hash scans prune on times,
# numbers and the per-file dictionaries), a 1.44M-row DCGM day wrote in 0.43 s instead of 0.61 s, 30.0
# instead of 32.9 MB, and aggregated as fast (0.08 s either way).
NO_DICTIONARY = frozenset({"_source_line", "energy_mj", "power_w"})


def parquet_options(schema: pa.Schema) -> dict[str, object]:
    """The writer options of every raw Parquet file of `schema` (pq.ParquetWriter / pq.write_table)."""
    return {
        "compression": COMPRESSION,
        "use_dictionary": [f.name for f in schema if f.name not in NO_DICTIONARY],
        "write_statistics": [f.name for f in schema
                             if not (pa.types.is_string(f.type) or pa.types.is_large_string(f.type))],
    }


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def database_file(con: duckdb.DuckDBPyConnection) -> Path | None:
    """The file of the connection's current database, None when it is in memory."""
    row = con.execute("select path from duckdb_databases() where database_name = current_database()").fetchone()
    return Path(row[0]).resolve() if row and row[0] else None


def files_folder(con: duckdb.DuckDBPyConnection, table: str) -> Path | None:
    """Folder of `raw.<table>`'s Parquet files, or None when the table lives in DuckDB."""
    return folder_of(database_file(con), table)


def folder_of(db: Path | None, table: str) -> Path | None:
    """Folder of `raw.<table>`'s Parquet files beside the database file `db` (None: in memory)."""
    return db.with_suffix(".raw") / table if db is not None else None


def raw_schema(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[str, str | None, set[str]]]:
    """raw's tables and views as they are, in one query: name -> (table type, view SQL or None, column names)."""
    rows = con.execute(
        "select t.table_name, any_value(t.table_type), any_value(v.sql), list(c.column_name) "
        "from information_schema.tables as t "
        "left join duckdb_views() as v on v.database_name = current_database() and v.schema_name = 'raw' "
        "and v.view_name = t.table_name "
        "left join information_schema.columns as c on c.table_catalog = t.table_catalog "
        "and c.table_schema = t.table_schema and c.table_name = t.table_name "
        "where t.table_catalog = current_database() and t.table_schema = 'raw' group by t.table_name").fetchall()
    return {name: (kind, sql, {c for c in cols if c is not None}) for name, kind, sql, cols in rows}


def file_table_current(folder: Path, kind: str | None, sql: str | None) -> bool:
    """Whether `raw.<table>` (of type `kind`, a view defined by `sql`) is already the view over `folder`
    that ensure_file_table would make, its folder in place."""
    return kind == "VIEW" and sql is not None and str(folder) in sql and (folder / EMPTY_FILE).exists()


def _view_sql(table: str, folder: Path) -> str:
    return (f"create or replace view raw.{_q(table)} as "
            f"select * from read_parquet({_lit(str(folder / '*.parquet'))})")


def ensure_file_table(con: duckdb.DuckDBPyConnection, table: str, folder: Path, columns: dict[str, str]) -> bool:
    """Create (or move into files) `raw.<table>` as a view over `folder`; `columns` name -> DuckDB type,
    lineage included. Cheap when the view already points at `folder`. True when the view existed but
    its folder did not (deleted by hand): the rows of every file loaded before are gone."""
    kind, sql, _ = raw_schema(con).get(table, (None, None, set()))
    if file_table_current(folder, kind, sql):
        return False
    lost = kind == "VIEW" and not (folder / EMPTY_FILE).exists()
    folder.mkdir(parents=True, exist_ok=True)
    if kind is None:
        # No table and no view: a new database. Files left here belong to a deleted ledger of the same
        # name and must not appear in this one.
        for stale in folder.iterdir():
            if stale.name != EMPTY_FILE:
                stale.unlink()
    if not (folder / EMPTY_FILE).exists():
        typed = ", ".join(f"cast(null as {t}) as {_q(c)}" for c, t in columns.items())
        tmp = folder / f"{EMPTY_FILE}{TMP_MARK}{os.getpid()}"
        con.execute(f"copy (select {typed} limit 0) to {_lit(str(tmp))} (format parquet)")
        os.replace(tmp, folder / EMPTY_FILE)
    if kind == "BASE TABLE":
        _move_native_rows(con, table, folder)
    con.execute("create schema if not exists raw")
    con.execute(_view_sql(table, folder))
    return lost


def _move_native_rows(con: duckdb.DuckDBPyConnection, table: str, folder: Path) -> None:
    """An older ledger's DuckDB table becomes one file per landed file, then is dropped."""
    schema = pq.read_schema(folder / EMPTY_FILE)
    hashes = [r[0] for r in con.execute(f"select distinct _file_hash from raw.{_q(table)}").fetchall()]
    for file_hash in hashes:
        data = con.execute(f"select * from raw.{_q(table)} where _file_hash = ?", [file_hash]).to_arrow_table()
        tmp = folder / f"{file_hash}.parquet{TMP_MARK}{os.getpid()}"
        pq.write_table(data.select(schema.names).cast(schema), tmp, row_group_size=ROW_GROUP_ROWS,
                       **parquet_options(schema))
        os.replace(tmp, folder / f"{file_hash}.parquet")
    con.execute(f"drop table raw.{_q(table)}")


def remove_leftovers(folder: Path) -> list[str]:
    """Delete temporary files of loads that never finished (killed runs); their names."""
    if not folder.is_dir():
        return []
    gone = [p.name for p in folder.iterdir() if TMP_MARK in p.name]
    for name in gone:
        (folder / name).unlink(missing_ok=True)
    return gone


def load_time(con: duckdb.DuckDBPyConnection) -> datetime:
    """The `_loaded_at` of rows loaded now: the transaction's time as the loader's session sees it,
    which is what a DuckDB insert stamps (warehouse/raw.py insert_rows)."""
    return con.execute("select current_timestamp::timestamp").fetchone()[0]


class FileTableLoad:
    """One landed file's rows of a file-stored raw table: written to a temporary file, renamed into
    place by `commit` (after the DuckDB transaction), or removed by `abort`."""

    def __init__(self, con: duckdb.DuckDBPyConnection | None, table: str, folder: Path, *, file_hash: str,
                 source_file: str, fmt: str, loaded_at: datetime | None = None) -> None:
        self.table, self.folder = table, folder
        self.final = folder / f"{file_hash}.parquet"
        self.tmp = folder / f"{file_hash}.parquet{TMP_MARK}{os.getpid()}"
        # The per-file constants (hash, name, format) go in as one-entry dictionaries: the writer
        # stores them without hashing every row's copy (0.30 -> 0.25 s a 368,640-row file).
        schema = pq.read_schema(folder / EMPTY_FILE).remove_metadata()
        self.schema = pa.schema([pa.field(f.name, pa.dictionary(pa.int32(), f.type))
                                 if f.name in CONSTANT_STRINGS else f for f in schema])
        # Stamped like a DuckDB insert: the transaction's time, as the loader's session sees it (or the
        # time the loader gave, for a file prepared in a worker thread: warehouse/ingest.py).
        if loaded_at is None:
            assert con is not None, "FileTableLoad needs a connection or loaded_at"
            loaded_at = load_time(con)
        self.lineage = {"_file_hash": file_hash, "_source_file": source_file, "_format": fmt, "_loaded_at": loaded_at}
        self.writer: pq.ParquetWriter | None = None
        self.rows = 0

    def _shaped(self, data: pa.Table) -> pa.Table:
        n = data.num_rows
        arrays = []
        for field in self.schema:
            if field.name in data.column_names:
                arrays.append(data.column(field.name).cast(field.type))
            elif field.name in CONSTANT_STRINGS:
                arrays.append(pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)),
                                                             pa.array([self.lineage[field.name]], pa.string())))
            elif field.name in self.lineage:
                arrays.append(pa.repeat(pa.scalar(self.lineage[field.name], field.type), n))
            else:
                arrays.append(pa.nulls(n, field.type))
        return pa.Table.from_arrays(arrays, schema=self.schema)

    def write(self, data: pa.Table) -> int:
        """Append one parsed batch (contract columns; `_source_line` as the parser numbered it)."""
        if data.num_rows == 0:
            return 0
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.tmp, self.schema, **parquet_options(self.schema))
        self.writer.write_table(self._shaped(data), row_group_size=ROW_GROUP_ROWS)
        self.rows += data.num_rows
        return data.num_rows

    def correct(self, drop_lines: list[int], rejected_lines: list[int]) -> None:
        """Apply the parser's end-of-file corrections by rewriting the temporary file batch by batch
        (only a file with duplicates or reader rejects pays for it)."""
        self._close()
        if not self.tmp.exists() or not (drop_lines or rejected_lines):
            return
        fixed = self.tmp.with_name(self.tmp.name + "-fixed")
        rows = 0
        with pq.ParquetWriter(fixed, self.schema, **parquet_options(self.schema)) as out:
            for batch in pq.ParquetFile(self.tmp).iter_batches(batch_size=ROW_GROUP_ROWS):
                table = correct_lines(pa.Table.from_batches([batch]), drop_lines, rejected_lines)
                rows += table.num_rows
                out.write_table(table.cast(self.schema), row_group_size=ROW_GROUP_ROWS)
        os.replace(fixed, self.tmp)
        self.rows = rows

    def _close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def commit(self) -> None:
        """Put the new rows in place of the file's old ones (none written: the old ones go)."""
        self._close()
        if self.tmp.exists():
            os.replace(self.tmp, self.final)
        else:
            self.final.unlink(missing_ok=True)

    def abort(self) -> None:
        """Forget this load; the file's previous rows stay."""
        self._close()
        self.tmp.unlink(missing_ok=True)
        self.tmp.with_name(self.tmp.name + "-fixed").unlink(missing_ok=True)
