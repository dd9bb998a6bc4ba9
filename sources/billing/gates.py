"""Load-time gates on parsed bill lines: impossible amounts never reach raw, and a file
that names no currency says so in dq_rejects.

Bounds live in ONE place, `reference.bounds.PLAUSIBILITY` (USD; other currencies scaled by
`UNITS_PER_USD_CEILING`); docs/sources/billing.md "Plausibility gates" explains them.

- `implausible_amount`: |BilledCost| or |EffectiveCost| above `max_line_amount`. The line is
  quarantined (dropped from the table, one reject naming the column, value and bound).
- `implausible_unit_price`: a Usage line priced in hours (PricingUnit, else ConsumedUnit, such as
  `Hours`, `1 Hour`, `10 Hours`) whose |BilledCost| / hours is above `max_per_hour`; judged only
  when |BilledCost| >= `unit_check_min_amount` (cent rounding of a tiny line is no price).
- credentials (in `x_extra`, tags, descriptions) are redacted for every family at load, after this gate:
  `sources.secrets.scrub_output`, called by warehouse/ingest.py.
- `missing_currency_column`: the file has rows and none names a currency (no BillingCurrency
  column, or an empty one); `missing_currency`: some rows name none. One file-level reject row
  (line NULL) names the file and the lines. The rows load into raw, but the ledger holds them out
  (fct_billing_held_out, a warning) unless the registry's policies.default_currency_by_account
  gives their billing account's currency: money without a currency is never published.

One DuckDB query over the Arrow table.
"""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc

from reference import PLAUSIBILITY, units_per_usd_case
from sources.billing.schema import TABLE
from sources.common import ParseOutput, Reject, scratch_connection

#: Hour units a price may be stated in: `Hours`, `Hour`, `Hrs`, `1 Hour`, `10 Hours`, `Instance Hours`.
HOUR_UNIT = r"^\s*([0-9]+)?\s*(instance[ -])?(hours?|hrs?|h)\s*$"
BOUND_SOURCE = "reference/bounds.py PLAUSIBILITY"


def _factor_sql(col: str) -> str:
    return f"({units_per_usd_case(f'upper(trim({col}))')})"


def _num(name: str) -> str:
    return f"cast({PLAUSIBILITY[name]} as double)"


def implausible(tbl: pa.Table) -> list[Reject]:
    """Rejects for the lines of `tbl` (a billing_charges table) that break a plausibility bound."""
    cols = set(tbl.column_names)
    if tbl.num_rows == 0 or "BilledCost" not in cols:
        return []

    def col(name: str) -> str:
        return f'"{name}"' if name in cols else "null"

    factor = _factor_sql(col("BillingCurrency")) if "BillingCurrency" in cols else "1"
    unit = f"coalesce({col('PricingUnit')}, {col('ConsumedUnit')})"
    qty = f"case when {col('PricingUnit')} is not null then {col('PricingQuantity')} else {col('ConsumedQuantity')} end"
    con = scratch_connection()  # its own registration `_lines`
    try:
        con.register("_lines", tbl)
        rows = con.execute(f"""
            with t as (
                select _source_line, cast("BilledCost" as double) as billed,
                       cast({col('EffectiveCost')} as double) as effective,
                       coalesce(upper(trim({col('BillingCurrency')})), 'XXX') as cur, {factor} as f,
                       {col('ChargeCategory')} as category,
                       cast({qty} as double) * coalesce(cast(nullif(regexp_extract(lower({unit}), '{HOUR_UNIT}', 1), '')
                           as double), 1) as hours,
                       regexp_matches(lower(coalesce({unit}, '')), '{HOUR_UNIT}') as per_hour
                from _lines
            )
            select _source_line, 'implausible_amount', 'BilledCost', billed, cur, {_num('max_line_amount')} * f
            from t where abs(billed) > {_num('max_line_amount')} * f
            union all
            select _source_line, 'implausible_amount', 'EffectiveCost', effective, cur, {_num('max_line_amount')} * f
            from t where abs(effective) > {_num('max_line_amount')} * f and not abs(billed) > {_num('max_line_amount')} * f
            union all
            select _source_line, 'implausible_unit_price', 'BilledCost', abs(billed) / hours, cur, {_num('max_per_hour')} * f
            from t where per_hour and category = 'Usage' and hours > 0
              and abs(billed) >= {_num('unit_check_min_amount')} * f
              and abs(billed) / hours > {_num('max_per_hour')} * f
              and not abs(billed) > {_num('max_line_amount')} * f
            order by 1, 2
        """).fetchall()
    finally:
        con.close()
    out = []
    for line, rule, column, value, cur, bound in rows:
        name, what = (("max_per_hour", "per hour") if rule == "implausible_unit_price"
                      else ("max_line_amount", "on one line"))
        out.append(Reject(
            int(line), rule,
            f"{column} {_fmt(value)} {cur} {what} is above the ceiling of {_fmt(bound)} {cur} "
            f"({BOUND_SOURCE}['{name}'])", column, f"{Decimal(repr(value)):f}"))
    return out


def _fmt(x: float) -> str:
    return f"{Decimal(repr(x)):,.2f}"


_CURRENCY_FIX = ("the registry's policies.default_currency_by_account names the currency of their billing account "
                 "(or a 'default'); or re-export with BillingCurrency")


def gate(output: ParseOutput) -> ParseOutput:
    """Quarantine implausible lines; add the file-level `missing_currency_column` entry."""
    tbl = output.tables.get(TABLE)
    if tbl is None or tbl.num_rows == 0:
        return output
    bad = implausible(tbl)
    if bad:
        lines = pa.array(sorted({r.line for r in bad}), pa.int64())
        tbl = tbl.filter(pc.invert(pc.is_in(tbl["_source_line"].cast(pa.int64()), value_set=lines)))
    rejects = [*output.rejects, *bad]
    warnings = list(output.warnings)
    if "BillingCurrency" in tbl.column_names:
        cur = tbl["BillingCurrency"].cast(pa.string())
        missing = pc.fill_null(pc.equal(pc.utf8_trim_whitespace(cur), ""), True)  # null or blank
        nulls = int(pc.sum(missing).as_py() or 0)
    else:
        nulls = tbl.num_rows
    if tbl.num_rows and nulls == tbl.num_rows:
        rejects.insert(0, Reject(
            None, "missing_currency_column",
            f"no BillingCurrency in this file: its {tbl.num_rows} rows are held out of the ledger "
            f"(fct_billing_held_out) unless {_CURRENCY_FIX}", "BillingCurrency", None))
    elif nulls:
        empty = pc.indices_nonzero(missing).to_pylist()
        lines = tbl["_source_line"].take(pa.array(empty[:5])).to_pylist()
        rejects.insert(0, Reject(
            None, "missing_currency",
            f"{nulls} of {tbl.num_rows} rows have no BillingCurrency (lines {', '.join(map(str, lines))}"
            f"{', ...' if nulls > 5 else ''}): held out of the ledger (fct_billing_held_out) unless {_CURRENCY_FIX}",
            "BillingCurrency", None))
    return ParseOutput(tables={**output.tables, TABLE: tbl}, rejects=rejects, warnings=warnings)
