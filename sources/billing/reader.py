"""Reads a billing export (CSV, CSV.gz, Parquet) into a DuckDB temp table `raw`, all VARCHAR.

The table has one column per source column, named `c0..cN` (so odd header names such as
`tags/DevRel\\redbull...` or `Maßeinheit (UnitOfMeasure)` never need SQL quoting), plus
`_source_line`. `RawFile.columns` maps each original header name to its `cN` column.

Line numbers: DuckDB's CSV reader keeps file order, so when the file has exactly
rows + 1 physical lines (no blank lines, no newlines inside quoted fields, no skipped
malformed rows) row i is line i + 2 and we use that (fast path, no Python per row).
Otherwise we fall back to Python's C `csv` reader, which only records where each record
starts (slower but exact), and drop the records DuckDB rejected.
"""

from __future__ import annotations

import csv
import io
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa

from sources.common import GZIP_MAGIC, Reject, UnreadableFile, open_bytes
from sources.secrets import scrub_text

PARQUET_MAGIC = b"PAR1"
_PAREN_NAME = re.compile(r"\(([^()]+)\)\s*$")


def header_key(name: str) -> str:
    """Matching key of a header: BOM/space stripped, lower-cased, `Label (EnglishName)` -> name.

    Azure localises headers as `Maßeinheit (UnitOfMeasure)`; the English name in
    parentheses is the stable part. FOCUS and legacy matching is case-insensitive.
    """
    n = name.replace("\ufeff", "").strip()
    m = _PAREN_NAME.search(n)
    if m:
        n = m.group(1)
    return n.strip().lower()


def head_first_line(head: bytes) -> str:
    """First line of a file head (gzip heads are inflated), BOM stripped; '' for Parquet."""
    if head[:2] == GZIP_MAGIC:
        try:
            head = zlib.decompressobj(wbits=31).decompress(head, 65536)
        except zlib.error:
            return ""
    if head[:4] == PARQUET_MAGIC:
        return ""
    text = head.decode("utf-8-sig", errors="replace")
    return text.split("\n", 1)[0].rstrip("\r")


def header_keys_from_head(path: Path, head: bytes) -> set[str]:
    """Header keys of a CSV/CSV.gz head or a Parquet file's schema (cheap: no data read)."""
    if head[:4] == PARQUET_MAGIC:
        import pyarrow.parquet as pq

        return {header_key(n) for n in pq.read_schema(path).names}
    line = head_first_line(head)
    if not line:
        return set()
    return {header_key(n) for n in next(csv.reader([line]))}


@dataclass
class RawFile:
    """A file loaded into temp table `raw` (all VARCHAR for CSV; native types for Parquet)."""

    columns: dict[str, str]  # original header name -> column name in `raw`
    rows: int
    rejects: list[Reject] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    kind: str = "csv"

    def lookup(self) -> dict[str, str]:
        """Header key -> `raw` column; the first of several columns with one key wins."""
        out: dict[str, str] = {}
        for name, col in self.columns.items():
            out.setdefault(header_key(name), col)
        return out


def _open_text(path: Path) -> io.TextIOBase:  # caller closes (with-block)
    raw = open_bytes(path)
    return io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace", newline="")


def _read_header(path: Path) -> list[str]:
    try:
        with _open_text(path) as fh:
            header = next(csv.reader(fh), None)
    except (OSError, EOFError, csv.Error, zlib.error) as exc:
        raise UnreadableFile(path, 1, f"cannot read the header: {exc}") from exc
    if not header or not any(h.strip() for h in header):
        raise UnreadableFile(path, 1, "empty file or empty header line")
    return header


def count_lines(path: Path) -> int:
    """Physical lines (a last line without a newline counts)."""
    n = 0
    last = b"\n"
    with open_bytes(path) as fh:
        while chunk := fh.read(1 << 24):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (0 if last == b"\n" else 1)


def record_start_lines(path: Path) -> list[int]:
    """1-based start line of every non-empty data record (Python csv, exact with quoted newlines)."""
    starts: list[int] = []
    # The csv module's default 128 KiB field limit would stop counting at a long field (DuckDB
    # reads lines up to its own limit), leaving the rows after it without a line number.
    csv.field_size_limit(max(csv.field_size_limit(), 1 << 30))
    with _open_text(path) as fh:
        reader = csv.reader(fh)
        next(reader, None)
        prev = reader.line_num
        try:
            for rec in reader:
                if rec:  # [] is a blank line, which DuckDB skips too
                    starts.append(prev + 1)
                prev = reader.line_num
        except csv.Error:  # e.g. unterminated quote at EOF: DuckDB rejected that record
            starts.append(prev + 1)
    return starts


def _csv_options(ncols: int, pad: bool = False) -> str:
    cols = ", ".join(f"'c{i}': 'VARCHAR'" for i in range(ncols))
    # Explicit dialect (no sniffing): sniffing fails on truncated files and costs time.
    return (
        f"columns={{{cols}}}, auto_detect=false, header=false, skip=1, delim=',', quote='\"', "
        "escape='\"', nullstr=['NULL', 'null', ''], strict_mode=true, "
        "ignore_errors=true, store_rejects=true, rejects_table='_csv_rejects', rejects_scan='_csv_scans'"
        + (", null_padding=true, parallel=false" if pad else "")
    )


def csv_header(path: Path) -> tuple[list[str], dict[str, str], list[str]]:
    """(header fields, original name -> `cN` column, warnings) of a CSV/CSV.gz.

    Raises UnreadableFile for an empty header or a one-column header holding another
    delimiter. Duplicate names are kept as `name#<position>` (with a warning).
    """
    header = _read_header(path)
    if len(header) == 1:
        for delim in (";", "\t", "|"):
            if delim in header[0]:
                raise UnreadableFile(
                    path, 1, f"header has one column and contains {delim!r}: wrong delimiter "
                    f"(billing exports must be comma-separated)"
                )
    names: dict[str, str] = {}
    warnings: list[str] = []
    for i, h in enumerate(header):
        name = h.replace("\ufeff", "")
        if name in names:
            warnings.append(f"duplicate header {name!r} (column {i + 1}); kept as {name}#{i + 1}")
            name = f"{name}#{i + 1}"
        names[name] = f"c{i}"
    return header, names, warnings


def load_csv(con: duckdb.DuckDBPyConnection, path: Path) -> RawFile:
    """Load a CSV or CSV.gz into temp table `raw` (+ `_source_line`); malformed lines become rejects."""
    header, names, warnings = csv_header(path)
    src = str(path).replace("'", "''")
    try:
        con.execute(f"create temp table _raw0 as select * from read_csv('{src}', {_csv_options(len(header))})")
        bad = con.execute(
            "select line, error_type, error_message, csv_line from _csv_rejects order by line"
        ).fetchall()
    except duckdb.Error as exc:
        raise UnreadableFile(path, None, f"DuckDB cannot read the CSV: {str(exc).splitlines()[0]}") from exc
    rows = con.execute("select count(*) from _raw0").fetchone()[0]
    if rows == 0 and bad and all(b[1] == "MISSING COLUMNS" for b in bad) and len({b[2] for b in bad}) == 1:
        # Every row has the same number of fields, fewer than the header (opencost's Template
        # export): the header has extra trailing columns, so pad them with NULL and say so.
        warnings.append(f"every data row is short of the header ({bad[0][2]}); trailing columns read as NULL")
        con.execute("drop table _raw0")
        con.execute(f"create temp table _raw0 as select * from read_csv('{src}', {_csv_options(len(header), pad=True)})")
        bad = []
        rows = con.execute("select count(*) from _raw0").fetchone()[0]
    # DuckDB reports a short line once per missing column: one reject per line (the first error).
    first_per_line = {}
    for line, etype, msg, text in bad:
        first_per_line.setdefault(int(line), (etype, msg, text))
    rejects = [
        Reject(line, "malformed_row", scrub_text(f"{etype}: {msg}"), None, (scrub_text(text) or "")[:200])
        for line, (etype, msg, text) in first_per_line.items()
    ]
    bad_lines = {r.line for r in rejects}
    if not bad_lines and count_lines(path) == rows + 1:
        con.execute("create temp view raw as select rowid + 2 as _source_line, * from _raw0")
    else:
        starts = [s for s in record_start_lines(path) if s not in bad_lines]
        if len(starts) != rows:
            warnings.append(
                f"line numbers approximate: Python csv found {len(starts)} records, DuckDB {rows}"
            )
            starts = (starts + [None] * rows)[:rows]
        con.register("_lines", pa.table({"_idx": pa.array(range(rows), pa.int64()), "_line": pa.array(starts, pa.int64())}))
        con.execute(
            "create temp view raw as select l._line as _source_line, r.* "
            "from (select rowid as _idx, * from _raw0) r join _lines l using (_idx)"
        )
    return RawFile(columns=names, rows=rows, rejects=rejects, warnings=warnings)


def _as_text(name: str, sql_type: str) -> str:
    """A Parquet column as the text a CSV export would hold: nested values (CUR 2.0's `resource_tags` MAP)
    as JSON, the rest cast."""
    nested = sql_type.startswith(("MAP", "STRUCT", "UNION")) or sql_type.endswith("]")
    return f"to_json({name})::varchar" if nested else f"cast({name} as varchar)"


def load_parquet(con: duckdb.DuckDBPyConnection, path: Path, text: bool = False) -> RawFile:
    """Load a Parquet file into view `raw`; `_source_line` is the 1-based row index. `text`: every column as
    text (`_as_text`), for mappings written against CSV exports (legacy.py)."""
    src = str(path).replace("'", "''")
    try:
        desc = con.execute(f"describe select * from read_parquet('{src}')").fetchall()
    except duckdb.Error as exc:
        raise UnreadableFile(path, None, f"DuckDB cannot read the Parquet file: {str(exc).splitlines()[0]}") from exc
    names = {d[0]: f"c{i}" for i, d in enumerate(desc)}
    types = {d[0]: str(d[1]) for d in desc}
    quoted = {n: '"' + n.replace('"', '""') + '"' for n in names}
    sel = ", ".join(f"{_as_text(quoted[n], types[n]) if text else quoted[n]} as {c}" for n, c in names.items())
    # A view, not a table: Parquet scans are columnar, so the engine's extra passes (enum
    # check, distinct tags) read only their columns; materialising cost more than it saved.
    con.execute(
        f"create temp view raw as select file_row_number + 1 as _source_line, {sel} "
        f"from read_parquet('{src}', file_row_number=true)"
    )
    rows = con.execute(f"select count(*) from read_parquet('{src}')").fetchone()[0]
    return RawFile(columns=names, rows=rows, kind="parquet")


def load_file(con: duckdb.DuckDBPyConnection, path: Path, text: bool = False) -> RawFile:
    """CSV, CSV.gz or Parquet, recognised by magic bytes (`text`: see load_parquet)."""
    with open(path, "rb") as fh:
        magic = fh.read(4)
    if magic == PARQUET_MAGIC:
        return load_parquet(con, path, text)
    return load_csv(con, path)
