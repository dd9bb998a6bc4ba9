"""Write the published FOCUS 1.3 export (fct_focus_export) to files.

Reads only the published copy (serving.duckdb) on a read-only DuckDB connection and writes with
DuckDB COPY: Parquet (default; DECIMAL money kept exact) or CSV with a header. One file per billing
period, `focus_<YYYY-MM>.<ext>`, so another tool can load a month or the whole folder:

    select * from read_parquet('exports/focus/*.parquet')
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb

from reporting.safe_text import FORMULA_STARTS, NUMBER_TEXT_PATTERN
from warehouse.serving import NotPublished

EXPORT_TABLE = "fct_focus_export"
# CSV timestamps as FOCUS writes them (ISO 8601 UTC with `Z`, `2026-05-01T00:00:00Z`): DuckDB's CSV
# default (`2026-05-01 00:00:00`) is no FOCUS date/time and other FOCUS readers take it for local time.
# The ledger's timestamps hold UTC (docs/sources/billing.md). Parquet keeps the typed TIMESTAMP.
CSV_TIMESTAMP = "%Y-%m-%dT%H:%M:%SZ"
FORMATS = {"parquet": "(format parquet, compression zstd)",
           "csv": f"(format csv, header true, timestampformat '{CSV_TIMESTAMP}', dateformat '%Y-%m-%d')"}
# Columns only GPU Ledger needs to trace a row; every FOCUS column and every x_ extension is written.
ORDER_BY = "BillingPeriodStart, BillingCurrency, ChargePeriodStart, x_charge_key, x_export_row_id"
# The export without splits: one row per ledger line. The split rows of a line (same x_charge_key) are
# re-assembled the way any reader would: costs and quantities summed over the parts, the team the
# ledger gave the line (x_ledger_team), and the Allocated* columns of our split dropped. A provider's own
# allocation (x_allocation_source 'provider': a line we never split) is kept as received.
SUMMED = ("BilledCost", "EffectiveCost", "ListCost", "ContractedCost", "ConsumedQuantity", "PricingQuantity",
          "PricingCurrencyEffectiveCost", "x_gpu_hours")
ALLOCATED = ("AllocatedMethodId", "AllocatedMethodDetails", "AllocatedResourceId", "AllocatedResourceName",
             "AllocatedTags")
LINES = (
    "select e.* replace ("
    + ", ".join(f"t.{c} as {c}" for c in SUMMED)
    + ", " + ", ".join(f"case when x_allocation_source = 'provider' then {c} end as {c}" for c in ALLOCATED)
    + ", x_ledger_team as x_team, t.x_workload_id as x_workload_id, x_charge_key as x_export_row_id, "
    "'line' as x_allocation_portion, "
    "case when x_allocation_source = 'provider' then x_allocation_source end as x_allocation_source) "
    "from {table} as e inner join (select x_charge_key, max(x_workload_id) as x_workload_id, "
    + ", ".join(f"sum({c}) as {c}" for c in SUMMED)
    + " from {table} group by x_charge_key) as t using (x_charge_key) "
    "qualify row_number() over (partition by x_charge_key order by x_export_row_id) = 1"
)


def csv_safe_select(con: duckdb.DuckDBPyConnection, source: str) -> str:
    """The select list of `source` for a CSV a spreadsheet will not run (OWASP CSV injection, the rule of
    reporting/safe_text.csv_cell): a text cell starting with = + - @ tab or CR gets a leading single quote,
    unless the text is just a number ('-3.50'); typed columns (DECIMAL, TIMESTAMP) are never touched, so
    money stays numbers. Parquet is typed and opened by no spreadsheet: written as is."""
    starts = ", ".join(f"chr({ord(c)})" for c in FORMULA_STARTS)
    number = NUMBER_TEXT_PATTERN.replace("'", "''")
    out = []
    for name, sql_type, *_rest in con.execute(f"describe select * from {source}").fetchall():
        col = '"' + name.replace('"', '""') + '"'
        if sql_type == "VARCHAR":
            out.append(f"case when left({col}, 1) in ({starts}) and not regexp_full_match({col}, '{number}') "
                       f"then chr(39) || {col} else {col} end as {col}")
        else:
            out.append(col)
    return ", ".join(out)


class ExportError(ValueError):
    """A bad argument (format, month) for the export."""


def _month_start(month: str) -> str:
    try:
        parsed = datetime.strptime(month, "%Y-%m")
    except ValueError as exc:
        raise ExportError(f"month {month!r}: expected YYYY-MM, e.g. 2025-04") from exc
    return parsed.strftime("%Y-%m-01")


def export_focus(serving_db: Path, out_dir: Path, fmt: str = "parquet", month: str | None = None,
                 splits: bool = True) -> list[Path]:
    """Write fct_focus_export of the publication at `serving_db` under `out_dir`; returns the files written.

    `month` (YYYY-MM) keeps one billing period. Files of the written months are replaced. A CSV's text cells
    a spreadsheet would run as a formula are neutralised (csv_safe_select). `splits=False`
    writes one row per ledger line (LINES): a file any FOCUS reader, GPU Ledger's own billing parser
    included, can load as a bill without counting a split line twice.
    """
    if fmt not in FORMATS:
        raise ExportError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
    start = _month_start(month) if month else None
    if not Path(serving_db).exists():
        raise NotPublished(f"nothing is published yet ({serving_db})")
    con = duckdb.connect(str(serving_db), read_only=True)
    try:
        tables = {r[0] for r in con.execute("select table_name from information_schema.tables").fetchall()}
        if EXPORT_TABLE not in tables:
            raise NotPublished(f"{EXPORT_TABLE} is not in the publication {serving_db}: run `gpu-ledger run` first")
        months = [r[0] for r in con.execute(
            f"select distinct strftime(cast(BillingPeriodStart as date), '%Y-%m') as m from {EXPORT_TABLE} "
            "where ? is null or cast(BillingPeriodStart as date) = cast(? as date) order by m",
            [start, start]).fetchall()]
        source = EXPORT_TABLE if splits else f"({LINES.format(table=EXPORT_TABLE)})"
        columns = csv_safe_select(con, source) if fmt == "csv" else "*"
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        written = []
        for m in months:
            target = out_dir / f"focus_{m}.{fmt}"
            tmp = target.with_name(f".{target.name}.tmp")
            # Only identifiers from this module are spliced in; the month and the path are bound values
            # where DuckDB allows it (COPY takes its target as a literal: quotes are doubled).
            literal = str(tmp).replace("'", "''")
            con.execute(
                f"copy (select {columns} from {source} where strftime(cast(BillingPeriodStart as date), '%Y-%m') = "
                f"'{m}' order by {ORDER_BY}) to '{literal}' {FORMATS[fmt]}")
            tmp.replace(target)
            written.append(target)
        return written
    finally:
        con.close()


def export_totals(serving_db: Path) -> list[tuple]:
    """(BillingPeriodStart, BillingCurrency, rows, Σ BilledCost, Σ EffectiveCost) of the published export."""
    con = duckdb.connect(str(serving_db), read_only=True)
    try:
        return con.execute(
            f"select cast(BillingPeriodStart as date), BillingCurrency, count(*), sum(BilledCost), sum(EffectiveCost) "
            f"from {EXPORT_TABLE} group by all order by all").fetchall()
    finally:
        con.close()
