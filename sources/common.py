"""The contract every connector in `sources/` follows.

A *format* is one file layout we can recognise by content (`detect`) and read (`parse`).
`parse` is pure: a path in, typed tables plus rejected rows out. It never writes to a
database and never raises for a bad *row*; it raises `UnreadableFile` only when nothing in
the file can be read, naming the file, the line and the problem.
"""

from __future__ import annotations

import codecs
import gzip
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Protocol

import numpy as np
import pyarrow as pa

if TYPE_CHECKING:
    import duckdb

HEAD_BYTES = 65536
GZIP_MAGIC = b"\x1f\x8b"


class UnreadableFile(Exception):
    """The whole file cannot be read (truncated JSON, binary garbage, wrong layout)."""

    def __init__(self, path: Path | str, line: int | None, problem: str) -> None:
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = f"{self.path}:{line}" if line else self.path
        super().__init__(f"{where}: {problem}")


@dataclass(frozen=True)
class Reject:
    """One row (or value) a parser could not accept, with where and why."""

    line: int | None
    rule: str
    message: str
    column: str | None = None
    value: str | None = None


@dataclass
class ParseOutput:
    """What a parser returns: rows per raw table, plus rejects and warnings.

    Every table in `tables` must match its contract in `warehouse/contracts/*.yaml`
    (columns missing from the arrow table load as NULL; extra columns are an error).
    Money and quantities that must stay exact are passed as strings or decimals and cast
    by the loader to the contract's DECIMAL type. Timestamps are UTC.
    A `_source_line` int column (1-based, header = line 1; JSON record index otherwise)
    is expected on every table so a ledger row can be traced back to its file.
    """

    tables: dict[str, pa.Table] = field(default_factory=dict)
    rejects: list[Reject] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def row_count(self) -> int:
        return sum(t.num_rows for t in self.tables.values())


@dataclass
class StreamEnd:
    """What a batched parse knows only once every batch was read (see `BatchedParse`)."""

    rejects: list[Reject] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # Provisional `_source_line`s of rows already handed out that must not stay (duplicates).
    drop_lines: list[int] = field(default_factory=list)
    # Sorted file lines the reader skipped: every provisional line moves past those before it.
    rejected_lines: list[int] = field(default_factory=list)


class BatchedParse(Protocol):
    """A parse of one big table in bounded batches (memory must not grow with the file).

    `batches()` yields tables of at most a fixed number of rows, in file order, whose
    `_source_line` is provisional (row index + 2); once they are exhausted, `finish()` returns the
    rejects and warnings and the two corrections the loader applies inside the same transaction:
    delete `drop_lines`, then shift lines past `rejected_lines` (`provisional_to_file_lines`).
    A file that cannot be read at all raises UnreadableFile from `batches()`.
    """

    table: str

    def batches(self) -> Iterator[pa.Table]: ...

    def finish(self) -> StreamEnd: ...


@dataclass(frozen=True)
class SourceFormat:
    """A recognisable file format and how to read it (`stream`: the same parse in bounded batches)."""

    name: str
    family: str
    detect: Callable[[Path, bytes], bool]
    parse: Callable[[Path], ParseOutput]
    description: str = ""
    stream: Callable[[Path], BatchedParse] | None = None
    # The raw tables a file of this format writes; a refresh rebuilds only the models reading the tables
    # its new files write (pipelines/changed_sources.py). Empty: any table of the family.
    tables: tuple[str, ...] = ()
    # For a file no format of the family recognised: what it looks like to this format and how to make it
    # readable (a clause for the quarantine reason), else None. Called like `detect`, on that failure path only.
    near_miss: Callable[[Path, bytes], str | None] | None = None


def read_head(path: Path, size: int = HEAD_BYTES) -> bytes:
    """First bytes of a file, for content-based format detection."""
    with open(path, "rb") as fh:
        return fh.read(size)


def is_gzip(path: Path) -> bool:
    """Whether the file is gzip (by its magic bytes, not its name)."""
    with open(path, "rb") as fh:
        return fh.read(2) == GZIP_MAGIC


def open_bytes(path: Path) -> BinaryIO:
    """The file's bytes, inflated when it is gzip; the caller closes it."""
    return gzip.open(path, "rb") if is_gzip(path) else open(path, "rb")  # type: ignore[return-value]  # noqa: SIM115


def wide_text_encoding(head: bytes) -> str | None:
    """"UTF-16" or "UTF-32" when the head starts with that byte order mark (Windows PowerShell's `>` and
    Excel's "Unicode text" write UTF-16), else None: every reader here reads UTF-8."""
    for bom, name in ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
                      (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16")):
        if head.startswith(bom):  # UTF-32 LE first: its mark starts with UTF-16 LE's
            return name
    return None


def head_text(head: bytes) -> str:
    """Decode a head sample leniently (BOM stripped) for sniffing."""
    return head.decode("utf-8-sig", errors="replace")


def csv_lines_after_rejects(rows: int, rejected: list[int]) -> np.ndarray:
    """File line of each row a CSV reader kept: index + 2 (header = line 1), plus the rejected
    lines (sorted file line numbers) before it. Vectorised: fast readers keep good rows only."""
    return provisional_to_file_lines(np.arange(2, rows + 2, dtype=np.int64), rejected)


def provisional_to_file_lines(provisional: np.ndarray, rejected: list[int]) -> np.ndarray:
    """File lines of rows numbered `index + 2` by a reader that skipped the sorted `rejected` lines."""
    lines = np.asarray(provisional, dtype=np.int64)
    if rejected:
        thresholds = np.array([line - i for i, line in enumerate(rejected)], dtype=np.int64)
        lines = lines + np.searchsorted(thresholds, lines, side="right")
    return lines


def correct_lines(table: pa.Table, drop_lines: list[int], rejected_lines: list[int]) -> pa.Table:
    """A batch with a parse's end-of-file corrections: rows on the provisional `drop_lines` removed
    (duplicates), then `_source_line` moved past the `rejected_lines` the reader skipped. Row-local,
    so applying it batch by batch equals applying it to the whole file."""
    if not (drop_lines or rejected_lines):
        return table
    lines = table.column("_source_line").to_numpy()
    if drop_lines:
        keep = ~np.isin(lines, np.array(drop_lines, dtype=np.int64))
        table, lines = table.filter(pa.array(keep)), lines[keep]
    pos = table.schema.get_field_index("_source_line")
    return table.set_column(pos, table.field(pos),
                            pa.array(provisional_to_file_lines(lines, rejected_lines), pa.int64()))


def collect(parsed: BatchedParse) -> ParseOutput:
    """A batched parse as one ParseOutput (the corrections applied in memory): `parse` of small files."""
    tables = list(parsed.batches())
    end = parsed.finish()
    table = pa.concat_tables(tables) if tables else None
    if table is not None:
        table = correct_lines(table, end.drop_lines, end.rejected_lines)
    return ParseOutput(tables={parsed.table: table} if table is not None else {}, rejects=end.rejects,
                       warnings=end.warnings)


# DuckDB's reject_errors.error_type (spaces as `_`) -> our rule for a line the CSV reader could not
# split or decode: the line is quarantined, the file's other lines still load.
READER_REJECT_RULES = {
    "CAST": "non_numeric", "TOO_MANY_COLUMNS": "malformed_row", "TOO_FEW_COLUMNS": "malformed_row",
    "MISSING_COLUMNS": "malformed_row", "UNQUOTED_VALUE": "malformed_row", "INVALID_UNICODE": "malformed_row",
    "LINE_SIZE_OVER_MAXIMUM": "malformed_row",
}


def csv_reader_rejects(con: duckdb.DuckDBPyConnection) -> list[Reject]:
    """One Reject per line DuckDB's `read_csv(..., ignore_errors = true, store_rejects = true)`
    skipped (first error of the line), sorted by line; pair with `csv_lines_after_rejects`."""
    rows = con.execute(
        "select line, column_name, error_type, error_message, csv_line from reject_errors order by line, byte_position"
    ).fetchall()
    out: list[Reject] = []
    for line, column, etype, message, csv_line in rows:
        if out and out[-1].line == int(line):
            continue
        rule = READER_REJECT_RULES.get(str(etype).replace(" ", "_"), "malformed_row")
        out.append(Reject(int(line), rule, str(message).splitlines()[0][:200], column,
                          (csv_line or "").encode("utf-8", "replace").decode()[:200]))
    return out


_SCRATCH: duckdb.DuckDBPyConnection | None = None  # scratch_connection's database, opened on first use
_SCRATCH_LOCK = threading.Lock()
_INHERITED: list[object] = []  # a forked child's copy of its parent's database, never used


def _scratch_not_inherited() -> None:
    # DuckDB is not fork-safe (a forked child has none of its threads, maybe a lock held by one of them):
    # a child forked from a process that used the scratch database opens its own. The inherited one is
    # kept, never closed: closing it would wait for threads the child does not have.
    global _SCRATCH, _SCRATCH_LOCK
    if _SCRATCH is not None:
        _INHERITED.append(_SCRATCH)
    _SCRATCH, _SCRATCH_LOCK = None, threading.Lock()


os.register_at_fork(after_in_child=_scratch_not_inherited)


def scratch_connection() -> duckdb.DuckDBPyConnection:
    """A DuckDB connection of its own (a cursor) to one in-memory database per process, for a parser's
    or a gate's work on one file; close it when done. Its temporary tables and views, registrations,
    `store_rejects` tables and settings are its own; it reads timestamps in UTC and keeps insertion
    order (rowid = record order). Opening an in-memory database per file took 11-17 ms, ~0.4 s for
    the 30 LiteLLM files of a 256-GPU 30-day fleet; a cursor takes microseconds. Only for work that
    creates temporary objects alone and changes no global setting (threads, memory): a parser that needs
    either opens a database of its own."""
    import duckdb

    global _SCRATCH
    with _SCRATCH_LOCK:
        if _SCRATCH is None:
            _SCRATCH = duckdb.connect(config={
                "preserve_insertion_order": True,
                "temp_directory": f"{tempfile.gettempdir()}/gpu_ledger_duckdb",
            })
        con = _SCRATCH.cursor()
    con.execute("set TimeZone = 'UTC'")  # a session setting: each cursor sets it
    con.execute("set enable_progress_bar = false")
    return con
