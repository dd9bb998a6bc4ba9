"""Load-time plausibility gates for the families other than billing (billing has its own,
sources/billing/gates.py). A row whose figure is impossible is quarantined before the raw load:
dropped from its table, with one reject naming the column, the value and the bound it broke; the
rest of the file and every other file still load.

Bounds live in ONE place, `reference.bounds.PLAUSIBILITY` (the bottom-floor `reference` package),
each with its physics or market reason; money is in USD, another currency is
judged against bound x `UNITS_PER_USD_CEILING[currency]`. docs/sources/plausibility.md lists every
rule: which figure of which table meets which bound.

One DuckDB query per table (or per batch of a batched parse: every rule reads one row only) over the
Arrow table; Python only builds the rejects. A table whose rules are all plain ranges (DCGM samples)
is screened by each column's min and max first and queried only when one lies outside (645,120
generated DCGM rows: 0.02-0.05 s of gate instead of 0.3-0.4 s). A price without a GPU count is judged per GPU through
the instance catalogue (g5.xlarge: 1 GPU).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from reference import PLAUSIBILITY, instance_of, units_per_usd_case
from sources.common import (
    BatchedParse,
    ParseOutput,
    Reject,
    StreamEnd,
    provisional_to_file_lines,
    scratch_connection,
)


class Rule(NamedTuple):
    """One bound on one figure: `cond` (SQL over the row) true means the row is impossible."""

    rule: str  # the dq_rejects rule
    column: str  # the figure the reject names
    cond: str
    value: str  # SQL: the figure as judged (e.g. price / GPUs)
    bound: str  # SQL: the bound it is judged against
    what: str  # the bound in words (PLAUSIBILITY key and how it is applied)
    needs: tuple[str, ...]  # columns the rule reads: a table lacking one skips the rule
    span: tuple[float, float] | None = None  # a plain range of `column`: screened by its min and max first


def _b(name: str) -> str:
    return f"cast({PLAUSIBILITY[name]} as double)"


# The row's currency units per USD ceiling, a column the query's view computes once per row
# (`_rejects_for`). Spelled out in every rule that reads it, its 31-branch CASE made a 1,000-row
# LiteLLM file's gate query take 60 ms instead of 10.
_UNITS = "_units_per_usd"


def _units_sql(col: str) -> str:
    code = f"upper(trim(coalesce({col}, 'USD')))"
    return f"({units_per_usd_case(code)})"


def _slack(hours: str) -> str:
    return f"({hours} * (1 + {_b('duration_slack_rel')}) + {_b('duration_slack_hours')})"


_ELAPSED_H = "(epoch(ended_at) - epoch(started_at)) / 3600.0"
_SPAN = ("started_at", "ended_at")


def _range(rule: str, column: str, high: str, what: str) -> Rule:
    """`column` outside 0 .. `high` (a PLAUSIBILITY key)."""
    return Rule(rule, column, f"{column} < 0 or {column} > {_b(high)}", column, _b(high), f"0 .. {high} ({what})",
                (column,), (0.0, float(PLAUSIBILITY[high])))


def _price_rules(rule: str) -> list[Rule]:
    hour, gpu_hour = (f"{_b(k)} * {_UNITS}" for k in ("max_per_hour", "max_per_gpu_hour"))
    return [
        Rule(rule, "price", "price < 0", "price", "0", "no price is negative", ("price",)),
        Rule(rule, "price", f"lower(price_unit) = 'hour' and price > {hour}", "price", hour, "max_per_hour",
             ("price", "price_unit")),
        Rule(rule, "price", f"lower(price_unit) = 'gpu-hour' and price > {gpu_hour}", "price", gpu_hour,
             "max_per_gpu_hour", ("price", "price_unit")),
        Rule(rule, "price", f"lower(price_unit) = 'hour' and gpu_count > 0 and price / gpu_count > {gpu_hour}",
             "price / gpu_count", gpu_hour, "max_per_gpu_hour (price / GPUs)",
             ("price", "price_unit", "gpu_count")),
        # The file names no GPU count: the instance catalogue does (reference/instances.py).
        Rule(rule, "price", f"lower(price_unit) = 'hour' and coalesce(gpu_count, 0) <= 0 and _catalog_gpus > 0 "
             f"and price / _catalog_gpus > {gpu_hour}", "price / _catalog_gpus", gpu_hour,
             "max_per_gpu_hour (price / GPUs of the sku in the instance catalogue)",
             ("price", "price_unit", "_catalog_gpus")),
    ]


def _span_rules(rule: str, hours: str) -> list[Rule]:
    """A run's stated duration (`hours`, a column) against its own start and end."""
    return [
        Rule(rule, "ended_at", "ended_at < started_at", "epoch(ended_at) - epoch(started_at)", "0",
             "a run ends after it starts (seconds)", _SPAN),
        Rule(rule, hours, f"{hours} < 0", hours, "0", "no duration is negative", (hours,)),
        Rule(rule, hours, f"ended_at >= started_at and {hours} > {_slack(_ELAPSED_H)}", hours, _ELAPSED_H,
             "the run's own end - start in hours (1 % + 0.01 h slack)", (*_SPAN, hours)),
    ]


def _gpu_hours_rule(rule: str) -> Rule:
    return Rule(rule, "gpu_hours", f"ended_at >= started_at and gpu_count >= 0 and gpu_hours > "
                f"{_slack(f'gpu_count * {_ELAPSED_H}')}", "gpu_hours", f"gpu_count * {_ELAPSED_H}",
                "GPUs x the run's own end - start in hours (1 % + 0.01 h slack)", (*_SPAN, "gpu_count", "gpu_hours"))


_BUCKET_DAYS = "greatest(1, ceil((epoch(bucket_end) - epoch(bucket_start)) / 86400.0))"
_API_BUCKET = f"{_b('max_api_bucket_per_day')} * {_BUCKET_DAYS} * {_UNITS}"
_TOKENS = "greatest(coalesce(total_tokens, 0), coalesce(prompt_tokens, 0) + coalesce(completion_tokens, 0))"

RULES: dict[str, list[Rule]] = {
    "gpu_price_observations": _price_rules("implausible_price"),
    "price_quotes": [
        *_price_rules("implausible_price"),
        _range("implausible_price", "gpu_count", "max_gpus_per_job", "GPUs in one deal"),
        Rule("implausible_price", "minimum_commitment",
             f"minimum_commitment > {_b('max_line_amount')} * {_UNITS}", "minimum_commitment",
             f"{_b('max_line_amount')} * {_UNITS}", "max_line_amount",
             ("minimum_commitment",)),
    ],
    "api_requests": [
        Rule("implausible_amount", "spend", f"spend < 0 or spend > {_b('max_api_request_amount')} * {_UNITS}",
             "spend", f"{_b('max_api_request_amount')} * {_UNITS}", "0 .. max_api_request_amount",
             ("spend",)),
        Rule("implausible_amount", "spend", f"{_TOKENS} = 0 and spend > {_b('max_api_spend_without_tokens')} * "
             f"{_UNITS}", "spend", f"{_b('max_api_spend_without_tokens')} * {_UNITS}",
             "max_api_spend_without_tokens (a request that counts no tokens)",
             ("spend",)),
        Rule("implausible_unit_price", "spend", f"{_TOKENS} > 0 and spend / {_TOKENS} > "
             f"{_b('max_api_cost_per_token')} * {_UNITS}", f"spend / {_TOKENS}",
             f"{_b('max_api_cost_per_token')} * {_UNITS}", "max_api_cost_per_token (per token)",
             ("spend",)),
    ],
    "api_cost_buckets": [
        Rule("implausible_amount", col, f"abs({col}) > {_API_BUCKET}", col, _API_BUCKET,
             "max_api_bucket_per_day x days in the bucket", (col, "bucket_start", "bucket_end"))
        for col in ("amount", "list_amount")
    ],
    "gpu_jobs": [
        _range("implausible_usage", "gpu_count", "max_gpus_per_job", "the largest clusters"),
        Rule("implausible_usage", "gpu_count", f"n_nodes > 0 and gpu_count > n_nodes * {_b('max_gpus_per_node')}",
             "gpu_count", f"n_nodes * {_b('max_gpus_per_node')}", "nodes x max_gpus_per_node", ("gpu_count", "n_nodes")),
        *_span_rules("implausible_usage", "elapsed_s")[:2],
        Rule("implausible_usage", "elapsed_s", f"ended_at >= started_at and elapsed_s > "
             f"{_slack(_ELAPSED_H)} * 3600", "elapsed_s / 3600.0", _ELAPSED_H,
             "the job's own end - start in hours (1 % + 0.01 h slack)", (*_SPAN, "elapsed_s")),
        Rule("implausible_usage", "gpu_hours", "gpu_hours < 0", "gpu_hours", "0", "no GPU-hours are negative",
             ("gpu_hours",)),
        _gpu_hours_rule("implausible_usage"),
        _range("implausible_usage", "gpu_util_pct", "max_percent", "utilisation is a percentage"),
        *(_range("implausible_usage", c, "max_ratio", "a share of one GPU") for c in ("gpu_share", "gpu_memory_share")),
    ],
    "gpu_samples": [
        *(_range("implausible_usage", c, "max_percent", "utilisation is a percentage")
          for c in ("gpu_util_pct", "mem_copy_util_pct")),
        *(_range("implausible_usage", c, "max_ratio", "DCGM profiling ratio")
          for c in ("gr_engine_active", "sm_active", "dram_active", "tensor_active")),
        *(Rule("implausible_usage", c, f"{c} < 0", c, "0", "no reading is negative", (c,), (0.0, float("inf")))
          for c in ("fb_used_mib", "power_w")),
    ],
    "training_runs": [
        _range("implausible_run", "gpu_count", "max_gpus_per_job", "the largest clusters"),
        *_span_rules("implausible_run", "wall_hours"),
    ],
    "eval_runs": [
        _range("implausible_run", "gpu_count", "max_gpus_per_batch_run", "one eval suite"),
        *_span_rules("implausible_run", "wall_hours"),
    ],
    "media_batches": [
        _range("implausible_run", "gpu_count", "max_gpus_per_batch_run", "one media batch"),
        *_span_rules("implausible_run", "gpu_hours")[:1],
        _gpu_hours_rule("implausible_run"),
    ],
}

_NUMERIC = ("price", "gpu_count", "spend", "total_tokens", "prompt_tokens", "completion_tokens", "gpu_hours",
            "minimum_commitment", "amount", "list_amount", "n_nodes", "elapsed_s", "gpu_util_pct", "gpu_share",
            "gpu_memory_share", "mem_copy_util_pct", "gr_engine_active", "sm_active", "dram_active", "tensor_active",
            "fb_used_mib", "power_w", "wall_hours")
_TIMES = ("started_at", "ended_at", "bucket_start", "bucket_end")
# Read by rules when present; a table without one judges it as NULL (no currency: USD).
_OPTIONAL = {"currency": "varchar", "total_tokens": "double", "prompt_tokens": "double",
             "completion_tokens": "double"}


def _with_catalogue(tbl: pa.Table) -> pa.Table:
    """Price tables gain `_catalog_gpus`: GPUs per instance of the row's sku in the instance catalogue."""
    if "sku" not in tbl.column_names:
        return tbl
    gpus = [(row.gpus if (row := instance_of(sku)) is not None else None) for sku in tbl.column("sku").to_pylist()]
    return tbl.append_column("_catalog_gpus", pa.array(gpus, pa.float64()))


def _all_in_range(tbl: pa.Table, rules: list[Rule]) -> bool:
    """True when every rule is a plain range over a numeric column whose min and max lie inside it: then
    no row breaks one (a clean DCGM batch of 300k rows costs a few min/max, not a query)."""
    for r in rules:
        if r.span is None or not pa.types.is_floating(tbl.schema.field(r.column).type):
            return False
        low, high = pc.min_max(tbl.column(r.column)).values()
        if low.is_valid and (low.as_py() < r.span[0] or high.as_py() > r.span[1]):
            return False
    return True


def _rejects_for(name: str, tbl: pa.Table) -> tuple[list[int], list[Reject]]:
    if name in ("gpu_price_observations", "price_quotes"):
        tbl = _with_catalogue(tbl)
    cols = set(tbl.column_names)
    rules = [r for r in RULES[name] if all(c in cols for c in r.needs)]
    if not rules or _all_in_range(tbl, rules):
        return [], []
    con = scratch_connection()  # its own temporary view `_t` and registration `_raw`
    try:
        con.register("_raw", tbl.append_column("_row", pa.array(range(tbl.num_rows), pa.int64())))
        # Parsers pass exact numbers as text (the loader casts to the contract): judge them as numbers.
        casts = [f"try_cast({c} as double) as {c}" for c in _NUMERIC if c in cols] + [
            f"try_cast({c} as timestamp) as {c}" for c in _TIMES if c in cols]
        extra = "".join(f", null::{t} as {c}" for c, t in _OPTIONAL.items() if c not in cols)
        typed = (f"select * replace ({', '.join(casts)}){extra} from _raw" if casts
                 else f"select *{extra} from _raw")
        con.execute(f"create temp view _t as select *, {_units_sql('currency')} as {_UNITS} from ({typed})")
        # One scan: the first rule a row breaks names it (its index, value and bound).
        def first(expr: Callable[[Rule], str]) -> str:
            return "case " + " ".join(f"when ({r.cond}) then {expr(r)}" for r in rules) + " end"

        sql = (f"select _row, _source_line, {first(lambda r: str(rules.index(r)))}, "
               f"cast({first(lambda r: f'cast({r.value} as double)')} as double), "
               f"cast({first(lambda r: f'cast({r.bound} as double)')} as double) "
               f"from _t where {' or '.join(f'({r.cond})' for r in rules)} order by 1")
        found = con.execute(sql).fetchall()
    finally:
        con.close()
    rows, rejects = [], []
    for row, line, i, value, bound in found:  # one reject per row: the first bound it broke
        rows.append(row)
        r = rules[i]
        rejects.append(Reject(line, r.rule, f"{r.column} = {_shown(value)} breaks {r.what} (bound {_shown(bound)}; "
                                            "reference/bounds.py PLAUSIBILITY): quarantined", r.column,
                              repr(value)))
    return rows, rejects


def _shown(x: float | None) -> str:
    """A figure as people read it: 999,999,999.12 (never 1e+09), 0.05, 1.08333."""
    if x is None:
        return "null"
    if abs(x) >= 1000:
        return f"{x:,.2f}".removesuffix(".00")
    return f"{x:.6g}"


def gate_table(name: str, tbl: pa.Table) -> tuple[pa.Table, list[Reject]]:
    """`tbl` (rows of raw.`name`) without its implausible rows, and one reject per row dropped."""
    if name not in RULES or tbl.num_rows == 0 or "_source_line" not in tbl.column_names:
        return tbl, []
    rows, bad = _rejects_for(name, tbl)
    if not rows:
        return tbl, []
    keep = pc.invert(pc.is_in(pa.array(range(tbl.num_rows), pa.int64()), value_set=pa.array(rows, pa.int64())))
    return tbl.filter(keep), bad


def gate(output: ParseOutput) -> ParseOutput:
    """`output` with the implausible rows of every known table quarantined (rows dropped, rejects added)."""
    tables = dict(output.tables)
    rejects = list(output.rejects)
    for name in RULES.keys() & tables.keys():
        tables[name], bad = gate_table(name, tables[name])
        rejects.extend(bad)
    return ParseOutput(tables=tables, rejects=rejects, warnings=list(output.warnings))


class GatedParse:
    """A batched parse whose batches pass the gate; the rejects (their provisional lines moved to file
    lines, as the loader moves the rows) join the parser's own at `finish()`."""

    def __init__(self, parsed: BatchedParse) -> None:
        self.parsed = parsed
        self.table = parsed.table
        self._rejects: list[Reject] = []

    def batches(self) -> Iterator[pa.Table]:
        for batch in self.parsed.batches():
            batch, bad = gate_table(self.table, batch)
            self._rejects.extend(bad)
            yield batch

    def finish(self) -> StreamEnd:
        end = self.parsed.finish()
        moved = [replace(r, line=int(provisional_to_file_lines([r.line], end.rejected_lines)[0]))
                 if r.line is not None else r for r in self._rejects]
        rejects = sorted([*end.rejects, *moved], key=lambda r: (r.line is not None, r.line or 0))
        return replace(end, rejects=rejects)


def gate_stream(parsed: BatchedParse) -> BatchedParse:
    """`parsed` with the gate applied batch by batch (memory stays one batch)."""
    return GatedParse(parsed) if parsed.table in RULES else parsed
