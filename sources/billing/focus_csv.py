"""FOCUS CSV fast path: ONE typed DuckDB read, checks in the same pass, Arrow out.

The general billing path (`reader.load_csv` + `engine.finish`) copies the whole file into an
all-VARCHAR temp table and types it in a second query (about 2x DuckDB's plain read). FOCUS
columns have known names and types, so here `read_csv` types the money columns itself and the
same query does everything else (about DuckDB's plain read):

- Money/quantity columns are read as DECIMAL(18,12) by the CSV reader (as fast as VARCHAR;
  DECIMAL(38,12) is ~3.5x slower there) and widened to DECIMAL(38,12) in the projection. A
  value the reader cannot convert (text, or 1e6 and more) rejects its line (`store_rejects`);
  those lines alone are then parsed by the general path (rescue, below). If many lines fail
  (a file with many amounts of 1e6+), the file is read again with DECIMAL(38,12) for the
  columns that failed.
- Timestamps stay VARCHAR in the reader and go through `engine.ts_expr` in the projection:
  read_csv's TIMESTAMP type silently drops UTC offsets and its TIMESTAMPTZ type turns a bad
  value into NULL without a reject, so neither can be trusted with a user's file.
- Checks (missing value, invalid timestamp, period reversed) are one boolean per row; a bad
  row carries `_rej`, the JSON of its raw timestamp texts (NULL for good rows, so it costs
  nothing in the common case). Currency codes are checked per DISTINCT value in pyarrow.
- Tags are normalised per DISTINCT value and mapped back with pyarrow; enum warnings are
  computed per DISTINCT value too. No Python runs per row.

Line numbers: read_csv keeps file order; when the file has exactly 1 + rows + rejected-lines
physical lines (no blank line, no newline inside quotes), row i is line i + 2 shifted past the
rejected lines (vectorised). Otherwise Python's csv module gives the record start lines when
DuckDB rejected nothing; an odd layout WITH reader rejects (rare: small hand-made files) goes
to the general path, whose line matching handles it.
"""

from __future__ import annotations

import csv
import tempfile
from collections.abc import Callable
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sources.billing import mappings
from sources.billing.engine import (
    REQUIRED_VALUES,
    Staged,
    check_rejects,
    connect,
    enum_expr,
    finish,
    lit,
    q,
    ts_expr,
    x_extra_expr,
)
from sources.billing.reader import RawFile, count_lines, csv_header, load_csv, record_start_lines
from sources.billing.schema import DECIMAL, DECIMAL_COLUMNS, FOCUS_COLUMNS, TABLE, TIMESTAMP_COLUMNS
from sources.billing.tags import normalise_distinct
from sources.common import ParseOutput, Reject, UnreadableFile, csv_lines_after_rejects
from sources.prices._rows import CURRENCIES
from sources.secrets import scrub_text

#: Reader type of money columns: 64-bit decimal, parsed at VARCHAR speed.
FAST_DECIMAL = "DECIMAL(18,12)"
#: Reader-rejected lines above which the file is read again with DECIMAL(38,12) columns.
REREAD_MIN_LINES = 100

Stage = Callable[[RawFile], Staged]


def parse_focus_csv(path: Path, stage: Stage, general: Callable[[Path], ParseOutput]) -> ParseOutput:
    """Parse a FOCUS CSV/CSV.gz; `stage` maps header columns (as `engine.Staged`), `general`
    is the all-VARCHAR path used for the rare layouts this one does not handle."""
    header, names, header_warnings = csv_header(path)
    staged = stage(RawFile(columns=names, rows=0))  # raises UnreadableFile for missing columns
    wide: set[str] = set()
    while True:
        result = _read(path, header, names, header_warnings, staged, stage, wide)
        if result is None:
            return general(path)
        if isinstance(result, set):  # many amounts too wide for DECIMAL(18,12): read again
            wide = result
            continue
        return result


def _select(path: Path, ncols: int, staged: Staged, wide: set[str]) -> str:
    """The one query: typed read, canonical enums, x_extra, `_rej` for rows failing a check."""
    exprs = staged.exprs
    types = {f"c{i}": "VARCHAR" for i in range(ncols)}
    inner: list[str] = []
    for c in FOCUS_COLUMNS:
        col = exprs.get(c)
        if col is None or c == "Tags":
            continue
        if c in DECIMAL_COLUMNS:
            types[col] = DECIMAL if c in wide else FAST_DECIMAL
            inner.append(f"{col}::{DECIMAL} as {q(c)}")
        elif c in TIMESTAMP_COLUMNS:
            inner.append(f"{ts_expr(col)} as {q(c)}, {col} as {q('_r_' + c)}")
        elif c in mappings.FOCUS_ENUMS:
            inner.append(f"{enum_expr(col, c)} as {q(c)}")
        elif c == "BillingCurrency":
            inner.append(f"upper(trim({col})) as {q(c)}")
        else:
            inner.append(f"{col} as {q(c)}")
    tags = exprs.get("Tags", "cast(null as varchar)")
    inner.append(f"{tags} as {q('Tags')}")
    inner.append(f"{x_extra_expr(staged.extra)} as x_extra")

    out = [q(c) for c in FOCUS_COLUMNS if c in exprs and c != "Tags"]
    ts_present = [c for c in TIMESTAMP_COLUMNS if c in exprs]
    bad = [f"{q('BilledCost')} is null"]  # DECIMAL: NULL only when empty (bad text was rejected)
    # REQUIRED_VALUES' times: an absent column is empty on every row (the general path's rule)
    bad += [f"{q('_r_' + c)} is null" if c in exprs else "true" for c in REQUIRED_VALUES if c in TIMESTAMP_COLUMNS]
    bad += [f"({q('_r_' + c)} is not null and {q(c)} is null)" for c in ts_present]
    bad.append(f"coalesce({q('ChargePeriodEnd')} < {q('ChargePeriodStart')}, false)")
    raw_ts = ", ".join(f"{lit(c)}, {q('_r_' + c)}" for c in ts_present)
    col_spec = "{" + ", ".join(f"{lit(k)}: {lit(v)}" for k, v in types.items()) + "}"
    src = lit(str(path))
    return (
        f"select {', '.join(out)}, {q('Tags')}, {lit(staged.focus_version)} as x_focus_version, "
        f"{lit(staged.source_format)} as x_source_format, x_extra, "
        f"case when {' or '.join(bad)} then json_object({raw_ts})::varchar end as _rej "
        f"from (select {', '.join(inner)} from read_csv({src}, columns = {col_spec}, auto_detect = false, "
        "header = false, skip = 1, delim = ',', quote = '\"', escape = '\"', "
        "nullstr = ['NULL', 'null', ''], strict_mode = true, ignore_errors = true, store_rejects = true))"
    )


def _reader_rejects(con: duckdb.DuckDBPyConnection) -> dict[int, list[tuple[str, str, str, str]]]:
    """Lines DuckDB's reader rejected: line -> [(error_type, message, csv_line, column)]."""
    by_line: dict[int, list[tuple[str, str, str, str]]] = {}
    for line, etype, msg, text, col in con.execute(
        "select line, error_type::varchar, error_message, csv_line, column_name "
        "from reject_errors order by line, byte_position"
    ).fetchall():
        by_line.setdefault(int(line), []).append((etype, msg, text or "", col))
    return by_line


def _read(path: Path, header: list[str], names: dict[str, str], header_warnings: list[str],
          staged: Staged, stage: Stage, wide: set[str]) -> ParseOutput | set[str] | None:
    """One attempt. ParseOutput; or the decimal columns to widen and read again; or None when
    the file needs the general path."""
    con = connect()
    con.execute("set enable_progress_bar = false")
    try:
        try:
            tbl = con.execute(_select(path, len(header), staged, wide)).to_arrow_table()
        except duckdb.Error as exc:
            raise UnreadableFile(path, None, f"DuckDB cannot read the CSV: {str(exc).splitlines()[0]}") from exc
        by_line = _reader_rejects(con)
        rows = tbl.num_rows
        if rows == 0 and by_line and all(e[0] == "MISSING COLUMNS" for errs in by_line.values() for e in errs):
            return None  # every row short of the header: the general path pads them (warning)

        warnings = list(header_warnings)  # a file without rows: the loader says so (warehouse/ingest.py)
        rejected = sorted(by_line)
        if count_lines(path) == rows + len(rejected) + 1:
            lines = pa.array(csv_lines_after_rejects(rows, rejected))
        elif not rejected:
            starts = record_start_lines(path)
            if len(starts) != rows:
                warnings.append(f"line numbers approximate: Python csv found {len(starts)} records, DuckDB {rows}")
                starts = (starts + [None] * rows)[:rows]
            lines = pa.array(starts, pa.int64())
        else:
            return None  # blank lines / quoted newlines AND rejected lines: general path matches them

        malformed: list[Reject] = []
        cast_lines: dict[int, str] = {}
        too_wide: set[str] = set()
        by_col = {col: c for c, col in staged.exprs.items()}
        for line, errs in by_line.items():
            structural = [e for e in errs if e[0] != "CAST"]
            if structural:
                etype, msg, text, _ = structural[0]
                malformed.append(Reject(line, "malformed_row", scrub_text(f"{etype}: {msg}"), None,
                                        scrub_text(text)[:200]))
            else:
                cast_lines[line] = errs[0][2]
                too_wide |= {by_col[e[3]] for e in errs if by_col.get(e[3]) in DECIMAL_COLUMNS}
        if too_wide - wide and len(cast_lines) >= max(REREAD_MIN_LINES, rows // 100):
            return wide | too_wide

        tbl = tbl.add_column(0, "_source_line", lines)
        tag_map, tag_warn = _tag_map(tbl)
        good, check_rej = _split_bad(con, tbl, staged)
        good = _apply_tags(good, tag_map)
        rescued = _rescue(header, cast_lines, stage) if cast_lines else None
        # Enum warnings over every typed row (as the general path: rejected rows included).
        enum_warn = _enum_warnings([tbl] + ([rescued.tables[TABLE]] if rescued else []))
        rejects = malformed
        out_warnings = warnings + list(staged.warnings) + enum_warn + tag_warn
        if rescued is not None:
            good = pa.concat_tables([good, rescued.tables[TABLE].cast(good.schema)])
            good = good.take(pc.sort_indices(good["_source_line"]))
            check_rej += rescued.rejects
            out_warnings += [w for w in rescued.warnings if w not in out_warnings]
        rejects += sorted(check_rej, key=lambda r: (r.line or 0, r.rule, r.column or ""))
        return ParseOutput(tables={TABLE: good}, rejects=rejects, warnings=out_warnings)
    finally:
        con.close()


def _split_bad(con: duckdb.DuckDBPyConnection, tbl: pa.Table, staged: Staged) -> tuple[pa.Table, list[Reject]]:
    """Drop rows failing a check (`_rej` set, or an unknown currency) and say why (rare path)."""
    mask = pc.is_valid(tbl["_rej"])
    if "BillingCurrency" in staged.exprs:
        unknown = [v for v in pc.unique(tbl["BillingCurrency"]).drop_null().to_pylist() if v not in CURRENCIES]
        if unknown:
            hit = pc.fill_null(pc.is_in(tbl["BillingCurrency"], value_set=pa.array(unknown, pa.string())), False)
            mask = pc.or_(mask, hit)
    if not pc.any(mask).as_py():
        return tbl.drop_columns(["_rej"]), []
    con.register("_bad_rows", tbl.filter(mask))
    # The reject query of the general path, over the bad rows only, as VARCHAR staged values:
    # raw timestamp text from `_rej`, typed values as text for the rest.
    cols = ["_source_line"]
    types: dict[str, str] = {}
    for c in (*DECIMAL_COLUMNS, *TIMESTAMP_COLUMNS, "BillingCurrency"):
        if c not in staged.exprs:
            continue
        types[c] = "VARCHAR"
        if c in TIMESTAMP_COLUMNS:
            cols.append(f"coalesce(_rej::json ->> {lit(c)}, {q(c)}::varchar) as {q(c)}")
        else:
            cols.append(f"{q(c)}::varchar as {q(c)}")
    con.execute(f"create temp view _bad_staged as select {', '.join(cols)} from _bad_rows")
    rejects = check_rejects(con, types, view="_bad_staged")
    return tbl.filter(pc.invert(mask)).drop_columns(["_rej"]), rejects


def _enum_warnings(tables: list[pa.Table]) -> list[str]:
    """FOCUS enum values outside the FOCUS list (per DISTINCT value)."""
    out = []
    for c, allowed in mappings.FOCUS_ENUMS.items():
        if c in tables[0].column_names:
            odd = {v for t in tables for v in pc.unique(t[c]).drop_null().to_pylist() if v not in allowed}
            if odd:
                out.append(f"{c}: values outside the FOCUS list kept as is: {sorted(odd)[:10]}")
    return out


def _tag_map(tbl: pa.Table) -> tuple[list[tuple[str, str | None]], list[str]]:
    """(raw tag text -> normalised text, for values that change; warnings), per DISTINCT value."""
    distinct = pc.unique(tbl["Tags"]).drop_null().to_pylist()
    if not distinct:
        return [], []
    norm, warnings = normalise_distinct(distinct)
    return [(a, b) for a, b in zip(distinct, norm) if a != b], warnings


def _apply_tags(tbl: pa.Table, changed: list[tuple[str, str | None]]) -> pa.Table:
    if not changed:
        return tbl
    tags = tbl["Tags"]
    idx = pc.index_in(tags, value_set=pa.array([a for a, _ in changed], pa.string()))
    new = pc.take(pa.array([b for _, b in changed], pa.string()), idx)
    fixed = pc.if_else(pc.is_valid(idx), new, tags)  # a None norm (invalid tags) stays NULL
    return tbl.set_column(tbl.column_names.index("Tags"), "Tags", fixed)


def _rescue(header: list[str], cast_lines: dict[int, str], stage: Stage) -> ParseOutput:
    """Lines the typed reader rejected (text or 1e6+ in a money column), through the general
    path as a small CSV of just those lines; lines mapped back to the original file."""
    order = sorted(cast_lines)
    with tempfile.TemporaryDirectory(prefix="gpu_ledger_focus_") as tmp:
        mini = Path(tmp) / "rejected_lines.csv"
        with open(mini, "w", encoding="utf-8", newline="") as fh:
            csv.writer(fh, lineterminator="\n").writerow(header)
            # One physical line each (the caller's line count proved it).
            fh.writelines(cast_lines[line].rstrip("\r\n") + "\n" for line in order)
        con = connect()
        try:
            raw = load_csv(con, mini)
            out = finish(con, raw, stage(raw), enum_warnings=False)
        finally:
            con.close()
    lut = np.array([0, 0, *order], dtype=np.int64)  # mini line m (2..) -> original line
    t = out.tables[TABLE]
    t = t.set_column(0, "_source_line", pa.array(lut[t["_source_line"].to_numpy()]))
    rejects = [Reject(int(lut[r.line]) if r.line is not None else None, r.rule, r.message, r.column, r.value)
               for r in out.rejects]
    return ParseOutput(tables={TABLE: t}, rejects=rejects, warnings=out.warnings)
