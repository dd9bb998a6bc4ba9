"""The contract every connector in `sources/` follows.

A *format* is one file layout we can recognise by content (`detect`) and read (`parse`).
`parse` is pure: a path in, typed tables plus rejected rows out. It never writes to a
database and never raises for a bad *row*; it raises `UnreadableFile` only when nothing in
the file can be read, naming the file, the line and the problem.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import numpy as np
import pyarrow as pa

if TYPE_CHECKING:
    import duckdb

HEAD_BYTES = 65536


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


@dataclass(frozen=True)
class SourceFormat:
    """A recognisable file format and how to read it."""

    name: str
    family: str
    detect: Callable[[Path, bytes], bool]
    parse: Callable[[Path], ParseOutput]
    description: str = ""


def read_head(path: Path, size: int = HEAD_BYTES) -> bytes:
    """First bytes of a file, for content-based format detection."""
    with open(path, "rb") as fh:
        return fh.read(size)


def head_text(head: bytes) -> str:
    """Decode a head sample leniently (BOM stripped) for sniffing."""
    return head.decode("utf-8-sig", errors="replace")


def csv_lines_after_rejects(rows: int, rejected: list[int]) -> np.ndarray:
    """File line of each row a CSV reader kept: index + 2 (header = line 1), plus the rejected
    lines (sorted file line numbers) before it. Vectorised: fast readers keep good rows only."""
    lines = np.arange(2, rows + 2, dtype=np.int64)
    if rejected:
        thresholds = np.array([line - i for i, line in enumerate(rejected)], dtype=np.int64)
        lines += np.searchsorted(thresholds, lines, side="right")
    return lines


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
