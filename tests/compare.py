"""Compare the marts two engines built: row for row, money to the cent.

Both sides are read from DuckDB files (the Spark marts are imported by warehouse/lake.py), and each
table is normalised before comparison so that only meaningful differences count:
  - DECIMAL (money, exact) -> rounded to the cent, compared exactly;
  - DOUBLE -> equal within a relative 1e-9 (engines sum floats in different orders; rounding to a
    fixed number of digits would split values that straddle a rounding boundary);
  - integer widths, text and timestamps -> compared exactly (timestamps as UTC instants).
Rows are matched by sorting on every normalised column, so the test names the first row that
differs rather than only a count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import duckdb


@dataclass
class TableDiff:
    """How one table differs between the two builds (empty lists: equal)."""

    table: str
    missing_columns: list[str] = field(default_factory=list)
    extra_columns: list[str] = field(default_factory=list)
    row_counts: tuple[int, int] = (0, 0)
    first_differences: list[tuple[tuple, tuple]] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        return (not self.missing_columns and not self.extra_columns
                and self.row_counts[0] == self.row_counts[1] and not self.first_differences)


def _norm(value: object) -> object:
    if isinstance(value, Decimal):
        return value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return str(value)
    if isinstance(value, (list, tuple)):
        return tuple(_norm(v) for v in value)
    return value


def _sort_key(row: tuple) -> tuple:
    # Floats order by 6 significant digits, so float noise cannot reorder otherwise equal rows.
    return tuple((v is None, str(type(v).__name__),
                  float(f"{v:.6g}") if isinstance(v, float) else (v if v is not None else 0)) for v in row)


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _rows(con: duckdb.DuckDBPyConnection, catalog: str, schema: str, table: str, cols: list[str]) -> list[tuple]:
    select = ", ".join(f'"{c}"' for c in cols)
    rows = con.execute(f'select {select} from {catalog}."{schema}"."{table}"').fetchall()
    normalised = [tuple(_norm(v) for v in r) for r in rows]
    return sorted(normalised, key=_sort_key)


def _columns(con: duckdb.DuckDBPyConnection, catalog: str, schema: str, table: str) -> list[str]:
    return [r[0] for r in con.execute(
        "select column_name from information_schema.columns where table_catalog = ? and table_schema = ? "
        "and table_name = ? order by ordinal_position", [catalog, schema, table]).fetchall()]


def compare_marts(expected_db: Path, actual_db: Path, schema: str = "marts", limit: int = 3) -> list[TableDiff]:
    """Every table of `schema` in `expected_db` against the same table in `actual_db`."""
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    con.execute(f"attach '{expected_db}' as expected (read_only)")
    con.execute(f"attach '{actual_db}' as actual (read_only)")
    diffs = []
    try:
        tables = [r[0] for r in con.execute(
            "select table_name from information_schema.tables where table_catalog = 'expected' "
            "and table_schema = ? order by 1", [schema]).fetchall()]
        actual_tables = {r[0].lower() for r in con.execute(
            "select table_name from information_schema.tables where table_catalog = 'actual' and table_schema = ?",
            [schema]).fetchall()}
        for table in tables:
            diff = TableDiff(table)
            diffs.append(diff)
            exp_cols = _columns(con, "expected", schema, table)
            if table.lower() not in actual_tables:
                diff.missing_columns = exp_cols
                continue
            act_cols = {c.lower(): c for c in _columns(con, "actual", schema, table)}
            diff.missing_columns = [c for c in exp_cols if c.lower() not in act_cols]
            diff.extra_columns = sorted(set(act_cols) - {c.lower() for c in exp_cols})
            common = [c for c in exp_cols if c.lower() in act_cols]
            exp_rows = _rows(con, "expected", schema, table, common)
            act_rows = _rows(con, "actual", schema, table, [act_cols[c.lower()] for c in common])
            diff.row_counts = (len(exp_rows), len(act_rows))
            for e, a in zip(exp_rows, act_rows):
                if not _same(e, a):
                    diff.first_differences.append((e, a))
                    if len(diff.first_differences) >= limit:
                        break
    finally:
        con.close()
    return diffs


def describe(diffs: list[TableDiff]) -> str:
    """A readable report of the tables that differ."""
    lines = []
    for d in diffs:
        if d.equal:
            continue
        lines.append(f"{d.table}: rows {d.row_counts[0]} vs {d.row_counts[1]}"
                     + (f"; missing columns {d.missing_columns}" if d.missing_columns else "")
                     + (f"; extra columns {d.extra_columns}" if d.extra_columns else ""))
        for e, a in d.first_differences:
            lines.append(f"    expected {e}\n    actual   {a}")
    return "\n".join(lines)
