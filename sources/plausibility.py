"""Load-time plausibility gates for the families other than billing (issue 19; billing has its own,
sources/billing/gates.py). A row whose figure is impossible is quarantined before the raw load:
dropped from its table, with one reject naming the column, the value and the bound it broke.

Bounds live in ONE place, `warehouse.reference.PLAUSIBILITY` (USD; another currency is judged
against bound x `UNITS_PER_USD_CEILING[currency]`); docs/sources/billing.md "Plausibility gates".

- prices (`gpu_price_observations`): `implausible_price` for a negative price, an hourly price above
  `max_per_hour`, or a per-GPU-hour price (a `gpu-hour` price, or an hourly price over its stated
  GPUs) above `max_per_gpu_hour`.
- API spend (`api_requests`): `implausible_amount` for spend below 0 or above `max_line_amount`;
  `implausible_unit_price` for spend per token above `max_api_cost_per_token` (LiteLLM spend is USD).
- usage (`gpu_jobs`): `implausible_usage` for a GPU count below 0 or above `max_gpus_per_job`, a job
  that ends before it starts, or GPU-hours above GPUs x elapsed hours (1 % + 0.01 h slack).

One DuckDB query per table over the Arrow table; Python only builds the rejects.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from sources.common import ParseOutput, Reject
from warehouse.reference import PLAUSIBILITY, UNITS_PER_USD_CEILING, UNITS_PER_USD_DEFAULT


def _bound(name: str) -> str:
    return f"cast({PLAUSIBILITY[name]} as double)"


def _factor(col: str) -> str:
    whens = " ".join(f"when '{c}' then {n}" for c, n in UNITS_PER_USD_CEILING.items())
    return f"(case upper(trim({col})) {whens} else {UNITS_PER_USD_DEFAULT} end)"


# table -> [(rule, column, condition, value expression, bound expression, what the bound is)]
RULES: dict[str, list[tuple[str, str, str, str, str, str]]] = {
    "gpu_price_observations": [
        ("implausible_price", "price", "price < 0", "price", "0", "no price is negative"),
        ("implausible_price", "price", f"lower(price_unit) = 'hour' and price > {_bound('max_per_hour')} * {_factor('currency')}",
         "price", f"{_bound('max_per_hour')} * {_factor('currency')}", "max_per_hour"),
        ("implausible_price", "price",
         f"lower(price_unit) = 'gpu-hour' and price > {_bound('max_per_gpu_hour')} * {_factor('currency')}",
         "price", f"{_bound('max_per_gpu_hour')} * {_factor('currency')}", "max_per_gpu_hour"),
        ("implausible_price", "price",
         f"lower(price_unit) = 'hour' and gpu_count > 0 and price / gpu_count > {_bound('max_per_gpu_hour')} * {_factor('currency')}",
         "price / gpu_count", f"{_bound('max_per_gpu_hour')} * {_factor('currency')}", "max_per_gpu_hour (price / GPUs)"),
    ],
    "api_requests": [
        ("implausible_amount", "spend", f"spend < 0 or spend > {_bound('max_line_amount')}", "spend",
         _bound("max_line_amount"), "0 .. max_line_amount"),
        ("implausible_unit_price", "spend",
         (f"total_tokens > 0 and spend >= 0 and spend <= {_bound('max_line_amount')} "
          f"and spend / total_tokens > {_bound('max_api_cost_per_token')}"),
         "spend / total_tokens", _bound("max_api_cost_per_token"), "max_api_cost_per_token (USD per token)"),
    ],
    "gpu_jobs": [
        ("implausible_usage", "gpu_count", f"gpu_count < 0 or gpu_count > {_bound('max_gpus_per_job')}", "gpu_count",
         _bound("max_gpus_per_job"), "0 .. max_gpus_per_job"),
        ("implausible_usage", "ended_at", "ended_at < started_at",
         "epoch(ended_at) - epoch(started_at)", "0", "a job ends after it starts (seconds)"),
        ("implausible_usage", "gpu_hours",
         ("ended_at >= started_at and gpu_count >= 0 and gpu_hours > "
          "gpu_count * (epoch(ended_at) - epoch(started_at)) / 3600.0 * 1.01 + 0.01"),
         "gpu_hours", "gpu_count * (epoch(ended_at) - epoch(started_at)) / 3600.0", "GPUs x elapsed hours"),
    ],
}


def _rejects_for(name: str, tbl: pa.Table) -> tuple[list[int], list[Reject]]:
    cols = set(tbl.column_names)
    rules = [r for r in RULES[name] if all(c in cols for c in _columns_of(r))]
    if not rules:
        return [], []
    con = duckdb.connect()
    try:
        con.register("_raw", tbl.append_column("_row", pa.array(range(tbl.num_rows), pa.int64())))
        # Parsers pass exact numbers as text (the loader casts to the contract): judge them as numbers.
        casts = [f"try_cast({c} as double) as {c}" for c in ("price", "gpu_count", "spend", "total_tokens", "gpu_hours")
                 if c in cols] + [f"try_cast({c} as timestamp) as {c}" for c in ("started_at", "ended_at") if c in cols]
        con.execute(f"create view _t as select * replace ({', '.join(casts)}) from _raw" if casts
                     else "create view _t as select * from _raw")
        sql = " union all ".join(
            f"select _row, _source_line, '{rule}', '{column}', cast({value} as double), cast({bound} as double), "
            f"'{what}' from _t where {cond}" for rule, column, cond, value, bound, what in rules)
        found = con.execute(f"select * from ({sql}) order by 1").fetchall()
    finally:
        con.close()
    rows, rejects, seen = [], [], set()
    for row, line, rule, column, value, bound, what in found:
        if row in seen:  # one reject per row: the first bound it broke
            continue
        seen.add(row)
        rows.append(row)
        rejects.append(Reject(line, rule, f"{column} = {value:,.6g} breaks {what} (bound {bound:,.6g}; "
                                          "warehouse/reference.py PLAUSIBILITY): quarantined", column, repr(value)))
    return rows, rejects


def _columns_of(rule: tuple[str, str, str, str, str, str]) -> set[str]:
    text = " ".join(rule[2:5])
    known = {"price", "price_unit", "gpu_count", "currency", "spend", "total_tokens", "started_at", "ended_at",
             "gpu_hours"}
    return {c for c in known if c in text}


def gate(output: ParseOutput) -> ParseOutput:
    """`output` with the implausible rows of every known table quarantined (rows dropped, rejects added)."""
    tables = dict(output.tables)
    rejects = list(output.rejects)
    for name in RULES.keys() & tables.keys():
        tbl = tables[name]
        if tbl.num_rows == 0 or "_source_line" not in tbl.column_names:
            continue
        rows, bad = _rejects_for(name, tbl)
        if rows:
            keep = pc.invert(pc.is_in(pa.array(range(tbl.num_rows), pa.int64()), value_set=pa.array(rows, pa.int64())))
            tables[name] = tbl.filter(keep)
            rejects.extend(bad)
    return ParseOutput(tables=tables, rejects=rejects, warnings=list(output.warnings))
