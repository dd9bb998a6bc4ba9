"""great-expectations suites, built in code (GX 1.x ephemeral context), run on DataFrames read
from DuckDB (GX's SQL datasource on DuckDB is broken upstream).

This module is the one place suites are declared: `SUITES` is data, one `Suite` per table, each
naming the Dagster asset its check targets (`raw/<family>` for raw tables, `marts/<table>` for
marts) and its severity. `blocking` suites stop the publication; the others are published as
warnings on the dashboard's data-quality page. `pipelines/defs/quality/checks.py` turns each
suite into one asset check.

Tables can be large (usage samples, API request logs, billing exports, the FOCUS ledger), and
GX on pandas costs seconds per million rows (it even hashes the whole frame twice per batch).
So a table with more than `sample_rows` rows (default SAMPLE_ROWS) is validated on a bounded,
deterministic frame: a reservoir sample (`using sample 100000 rows (reservoir, 42)`) plus the
rows DuckDB finds that an expectation could reject (nulls, values outside the set or range,
pairs out of order, duplicated keys), at most SUSPECT_ROWS per kind; the check metadata says so.
GX's verdict on that frame is the result. Only the columns the expectations name are read.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from typing import Any

import duckdb
import pandas as pd

from sources.billing.mappings import FOCUS_ENUMS
from sources.registry.workloads import WORKLOAD_TYPES

# ISO 4217 codes; mirrors `known_currencies()` in dbt/macros/known_currencies.sql (a test keeps
# the two equal): a price in any other code cannot be converted.
CURRENCIES = (
    "AED", "AFN", "ALL", "AMD", "ANG", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT", "BGN", "BHD", "BIF",
    "BMD", "BND", "BOB", "BRL", "BSD", "BTN", "BWP", "BYN", "BZD", "CAD", "CDF", "CHF", "CLP", "CNY", "COP", "CRC",
    "CUP", "CVE", "CZK", "DJF", "DKK", "DOP", "DZD", "EGP", "ERN", "ETB", "EUR", "FJD", "FKP", "GBP", "GEL", "GHS",
    "GIP", "GMD", "GNF", "GTQ", "GYD", "HKD", "HNL", "HTG", "HUF", "IDR", "ILS", "INR", "IQD", "IRR", "ISK", "JMD",
    "JOD", "JPY", "KES", "KGS", "KHR", "KMF", "KPW", "KRW", "KWD", "KYD", "KZT", "LAK", "LBP", "LKR", "LRD", "LSL",
    "LYD", "MAD", "MDL", "MGA", "MKD", "MMK", "MNT", "MOP", "MRU", "MUR", "MVR", "MWK", "MXN", "MYR", "MZN", "NAD",
    "NGN", "NIO", "NOK", "NPR", "NZD", "OMR", "PAB", "PEN", "PGK", "PHP", "PKR", "PLN", "PYG", "QAR", "RON", "RSD",
    "RUB", "RWF", "SAR", "SBD", "SCR", "SDG", "SEK", "SGD", "SHP", "SLE", "SOS", "SRD", "SSP", "STN", "SVC", "SYP",
    "SZL", "THB", "TJS", "TMT", "TND", "TOP", "TRY", "TTD", "TWD", "TZS", "UAH", "UGX", "USD", "UYU", "UZS", "VES",
    "VND", "VUV", "WST", "XAF", "XCD", "XOF", "XPF", "XXX", "YER", "ZAR", "ZMW", "ZWL",
)
CHARGE_CATEGORIES = FOCUS_ENUMS["ChargeCategory"]  # Usage, Purchase, Tax, Credit, Adjustment
JOB_STATES = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY",
              "RUNNING", "PENDING")
#: A table above this many rows is validated on a deterministic reservoir sample of this size
#: (plus the suspect rows, see read_frame).
SAMPLE_ROWS = 100_000
SAMPLE_SEED = 42

Expectation = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Suite:
    """One table's expectations: (GX expectation class name, kwargs) pairs, and where they run.

    `schema` is the DuckDB schema of `table` (raw or marts); `asset_key` the Dagster asset the
    check is attached to (default `<schema>/<table>`); `name` the check name (default
    `gx_<table>` for marts, `gx_raw_<table>` for raw tables); `sample_rows` bounds how many rows
    are sampled from a bigger table (None: validate every row, whatever the size).
    """

    table: str
    expectations: tuple[Expectation, ...]
    blocking: bool = True
    schema: str = "marts"
    asset_key: tuple[str, ...] = ()
    name: str = ""
    sample_rows: int | None = SAMPLE_ROWS

    @property
    def key(self) -> tuple[str, ...]:
        return self.asset_key or (self.schema, self.table)

    @property
    def check_name(self) -> str:
        return self.name or (f"gx_{self.table}" if self.schema == "marts" else f"gx_{self.schema}_{self.table}")

    @property
    def target(self) -> str:
        return f"{self.schema}.{self.table}"

    @property
    def severity(self) -> str:
        """As recorded in audit.check_results: 'error' stops the publication, 'warn' does not."""
        return "error" if self.blocking else "warn"

    def columns(self) -> list[str]:
        """Every column an expectation names, in first-mention order."""
        return list(dict.fromkeys(c for _, kwargs in self.expectations for c in _named(kwargs)))


# -- expectation shorthands (each returns plain (class name, kwargs) data) ----------------------

def not_null(*columns: str) -> tuple[Expectation, ...]:
    return tuple(("ExpectColumnValuesToNotBeNull", {"column": c}) for c in columns)


def unique(column: str) -> tuple[Expectation, ...]:
    """Not null and unique: a key."""
    return (("ExpectColumnValuesToNotBeNull", {"column": column}),
            ("ExpectColumnValuesToBeUnique", {"column": column}))


def unique_together(*columns: str) -> Expectation:
    return ("ExpectCompoundColumnsToBeUnique", {"column_list": list(columns)})


def in_set(column: str, values: tuple[str, ...] | list[str]) -> Expectation:
    """Nulls are not checked (GX column-map expectations skip them); add not_null when required."""
    return ("ExpectColumnValuesToBeInSet", {"column": column, "value_set": list(values)})


def between(column: str, low: float | None = None, high: float | None = None, strict_low: bool = False) -> Expectation:
    kwargs: dict[str, Any] = {"column": column, "min_value": low, "max_value": high}
    if strict_low:
        kwargs["strict_min"] = True
    return ("ExpectColumnValuesToBeBetween", kwargs)


def non_negative(*columns: str) -> tuple[Expectation, ...]:
    return tuple(between(c, 0) for c in columns)


def positive(*columns: str) -> tuple[Expectation, ...]:
    return tuple(between(c, 0, strict_low=True) for c in columns)


# Float rounding allowed at the bounds, as the dbt `value_between` test allows: a share computed as
# a quotient of sums can land at 100.00000000000001 (seen on Spark, which sums in another order).
FLOAT_TOLERANCE = 1e-6


def percent(*columns: str) -> tuple[Expectation, ...]:
    """0-100 where present (within FLOAT_TOLERANCE)."""
    return tuple(between(c, -FLOAT_TOLERANCE, 100 + FLOAT_TOLERANCE) for c in columns)


def ratio(*columns: str) -> tuple[Expectation, ...]:
    """0-1 where present (within FLOAT_TOLERANCE)."""
    return tuple(between(c, -FLOAT_TOLERANCE, 1 + FLOAT_TOLERANCE) for c in columns)


def ordered(low: str, high: str) -> Expectation:
    """low <= high on every row where both are present."""
    return ("ExpectColumnPairValuesAToBeGreaterThanB",
            {"column_A": high, "column_B": low, "or_equal": True, "ignore_row_if": "either_value_is_missing"})


def matches(column: str, regex: str) -> Expectation:
    return ("ExpectColumnValuesToMatchRegex", {"column": column, "regex": regex})


def currency(column: str, required: bool = True) -> tuple[Expectation, ...]:
    return (*(not_null(column) if required else ()), in_set(column, CURRENCIES))


def raw(table: str, family: str, *expectations: Expectation | tuple[Expectation, ...],
        blocking: bool = False, name: str = "") -> Suite:
    """A raw-table suite on the `raw/<family>` asset: warning unless the data would be unusable."""
    return Suite(table, _flat(expectations), blocking=blocking, schema="raw", asset_key=("raw", family),
                 name=name)


def mart(table: str, *expectations: Expectation | tuple[Expectation, ...], blocking: bool = False) -> Suite:
    return Suite(table, _flat(expectations), blocking=blocking)


def _flat(items: tuple[Expectation | tuple[Expectation, ...], ...]) -> tuple[Expectation, ...]:
    out: list[Expectation] = []
    for item in items:
        if isinstance(item[0], str):
            out.append(item)  # type: ignore[arg-type]
        else:
            out.extend(item)  # type: ignore[arg-type]
    return tuple(out)


def _latency_order(p50: str, p99: str, kinds: tuple[str, ...] = ("ttft", "tpot", "itl", "e2el")) -> tuple[Expectation, ...]:
    return tuple(ordered(f"{k}_ms_{p50}", f"{k}_ms_{p99}") for k in kinds)


RAW_SUITES: tuple[Suite, ...] = (
    # A billing line without an amount or a readable currency cannot be costed: blocking.
    raw("billing_charges", "billing",
        not_null("BilledCost", "BillingCurrency"),
        matches("BillingCurrency", r"^[A-Z]{3}$"),
        # Warning, not blocking: a raw problem is quarantined per file; blocking here would stop
        # every source's dbt build, and staging marks a missing currency as XXX (no currency).
        blocking=False, name="gx_raw_billing_charges_usable"),
    raw("billing_charges", "billing",
        in_set("BillingCurrency", CURRENCIES),
        ordered("ChargePeriodStart", "ChargePeriodEnd"),
        ordered("BillingPeriodStart", "BillingPeriodEnd"),
        not_null("ChargePeriodStart", "ChargeCategory", "x_source_format"),
        in_set("ChargeCategory", CHARGE_CATEGORIES),
        unique_together("_file_hash", "_source_line")),
    raw("gpu_price_observations", "prices",
        positive("price"),
        not_null("price", "currency", "observed_at", "source", "provider", "sku"),
        matches("currency", r"^[A-Z]{3}$"),
        in_set("currency", CURRENCIES),
        non_negative("gpu_count")),
    raw("gpu_samples", "usage",
        percent("gpu_util_pct", "mem_copy_util_pct"),
        ratio("gr_engine_active", "sm_active", "dram_active", "tensor_active"),
        non_negative("fb_used_mib", "power_w"),
        matches("gpu_uuid", r"^GPU-"),
        not_null("source_format")),
    raw("gpu_jobs", "usage",
        percent("gpu_util_pct"),
        non_negative("gpu_count", "gpu_hours", "elapsed_s"),
        ordered("started_at", "ended_at"),
        ordered("submitted_at", "started_at"),
        in_set("scheduler", ("slurm", "kubernetes")),
        in_set("state", JOB_STATES),
        not_null("job_id", "scheduler", "source_format")),
    raw("benchmark_runs", "benchmarks",
        _latency_order("median", "p99"),
        _latency_order("median", "p95"),
        _latency_order("p95", "p99"),
        non_negative("completed", "failed", "gpu_count", "duration_s"),
        not_null("run_id", "tool", "source_format")),
    # LiteLLM spend is what the proxy priced a request at: never negative (credits arrive in the
    # provider cost reports, not in the request log).
    raw("api_requests", "api_spend",
        non_negative("spend", "prompt_tokens", "completion_tokens", "cached_tokens", "total_tokens", "retries"),
        in_set("status", ("success", "failure")),
        in_set("currency", ("USD",)),
        ordered("started_at", "ended_at"),
        not_null("request_id", "started_at")),
    raw("registry_workloads", "registry",
        unique("workload_id"),
        not_null("team_id", "workload_type"),
        in_set("workload_type", WORKLOAD_TYPES)),
)

MART_SUITES: tuple[Suite, ...] = (
    # -- blocking: the ledger, the chargeback, unit costs and the price history ------------------
    mart("ledger_focus",
         unique("x_charge_key"),
         not_null("BilledCost", "ChargePeriodStart", "x_source_file", "x_team"),
         currency("BillingCurrency"),
         in_set("ChargeCategory", CHARGE_CATEGORIES),
         ordered("ChargePeriodStart", "ChargePeriodEnd"),
         non_negative("x_gpu_count", "x_gpu_hours"),
         blocking=True),
    mart("fct_chargeback_monthly",
         not_null("team_id", "billing_period_start", "total_cost", "direct_cost", "shared_cost", "idle_cost"),
         currency("currency"),
         unique_together("team_id", "billing_period_start", "currency"),
         non_negative("charge_lines"),
         blocking=True),
    mart("fct_workload_unit_cost",
         not_null("workload_id", "period", "basis", "all_in_cost"),
         currency("currency"),
         unique_together("workload_id", "period", "currency", "basis"),
         non_negative("effective_unit_cost", "naive_unit_cost", "cost_per_accepted_second",
                      "produced_outputs", "accepted_outputs"),
         blocking=True),
    mart("fct_gpu_price_history",
         unique("price_interval_id"),
         unique_together("provider", "sku", "region", "pricing_category", "currency", "valid_from"),
         not_null("provider", "sku", "pricing_category", "valid_from", "source", "price_per_hour"),
         currency("currency"),
         positive("price_per_hour", "price_per_gpu_hour", "observations"),
         ordered("valid_from", "valid_to"),
         ordered("first_observed_at", "last_observed_at"),
         blocking=True),
    # -- warnings: published and shown on the data-quality page ---------------------------------
    mart("dim_gpu",
         unique("gpu_model"),
         not_null("spec_source", "current_usd_on_demand_offers"),
         positive("memory_gb", "cheapest_on_demand_usd_per_gpu_hour"),
         non_negative("current_usd_on_demand_offers")),
    mart("dim_team",
         unique("team_id"),
         currency("budget_currency", required=False),
         non_negative("budget_monthly")),
    mart("dim_workload",
         unique("workload_id"),
         not_null("team_id", "workload_type"),
         in_set("workload_type", WORKLOAD_TYPES)),
    mart("fct_api_cost_reports_daily",
         not_null("day", "provider", "cost"),
         currency("currency"),
         unique_together("day", "provider", "currency")),
    mart("fct_api_prices",
         not_null("model_key", "catalog_version"),
         unique_together("model_key", "catalog_version"),
         currency("currency"),
         non_negative("input_cost_per_1m_tokens", "output_cost_per_1m_tokens", "cache_read_cost_per_1m_tokens"),
         ordered("valid_from", "valid_to")),
    mart("fct_api_spend_daily",
         not_null("day", "team_id", "cost"),
         currency("currency"),
         unique_together("day", "team_id", "workload_id", "provider", "model", "currency"),
         non_negative("cost", "failed_cost", "requests", "failed", "input_tokens", "output_tokens"),
         ordered("failed", "requests")),
    mart("fct_benchmark_runs",
         unique("run_id"),
         not_null("candidate", "acceptance_basis"),
         in_set("acceptance_basis", ("per-request", "summary-estimate", "not-measured")),
         _latency_order("p50", "p99"),
         non_negative("completed", "failed"),
         ratio("accepted_ratio", "estimated_accepted_share")),
    mart("fct_billing_savings",
         unique_together("billing_period_start", "BillingCurrency", "ProviderName", "x_team", "ServiceCategory"),
         not_null("billing_period_start", "x_team", "BilledCost",
                  "x_NegotiatedDiscountSavings", "x_CommitmentDiscountSavings", "x_TotalSavings"),
         currency("BillingCurrency"),
         non_negative("x_charge_lines", "x_lines_missing_list_cost", "x_lines_missing_contracted_cost")),
    mart("fct_commitment_utilisation",
         unique_together("ProviderName", "x_account_scope", "CommitmentDiscountId", "billing_period_start",
                         "BillingCurrency"),
         not_null("x_account_scope", "CommitmentDiscountId", "billing_period_start", "x_used_cost", "x_unused_cost"),
         currency("BillingCurrency"),
         percent("x_utilisation_pct"),
         non_negative("x_used_cost", "x_unused_cost", "x_charge_lines")),
    mart("fct_candidate_comparison",
         unique_together("workload_id", "candidate"),
         in_set("basis", ("measured", "projected")),
         not_null("monthly_cost"),
         currency("currency"),
         non_negative("monthly_cost", "effective_unit_cost"),
         ratio("quality_acceptance")),
    mart("fct_capacity_options",
         unique_together("workload_id", "option"),
         currency("currency"),
         non_negative("monthly_cost", "gpus_needed"),
         ratio("break_even_utilisation", "measured_utilisation")),
    mart("fct_eval_runs",
         unique("run_id"),
         not_null("workload_id"),
         non_negative("gpu_hours", "tasks_completed", "tasks_failed"),
         ordered("started_at", "ended_at")),
    mart("fct_gpu_failed_jobs",
         unique("job_key"),
         not_null("team_id", "failure_state", "failed_gpu_hours"),
         non_negative("failed_gpu_hours", "used_gpu_hours"),
         percent("gpu_util_pct")),
    mart("fct_gpu_idle_daily",
         unique_together("pool_id", "gpu_model", "day"),
         not_null("pool_id", "day"),
         percent("utilisation_pct"),
         non_negative("billed_gpu_hours", "idle_gpu_hours", "over_allocation_gpu_hours")),
    mart("fct_gpu_offers_current",
         unique("price_interval_id"),
         unique_together("provider", "sku", "region", "pricing_category", "currency"),
         not_null("gpu_model", "is_listed"),
         currency("currency"),
         positive("price_per_hour", "price_per_gpu_hour")),
    mart("fct_gpu_utilisation_daily",
         unique_together("day", "team_id", "workload_id", "gpu_model"),
         not_null("day", "team_id", "gpu_model"),
         percent("utilisation_pct"),
         non_negative("billed_gpu_hours", "idle_gpu_hours", "used_gpu_hours")),
    mart("fct_media_batches",
         unique("batch_id"),
         not_null("workload_id"),
         non_negative("gpu_hours", "produced", "accepted"),
         ordered("accepted", "produced"),
         ratio("accepted_ratio")),
    mart("fct_memory_fit",
         unique_together("workload_id", "gpu_model", "gpu_count", "precision", "context_length", "concurrency"),
         in_set("fit_status", ("fits with margin", "fits", "does not fit")),
         positive("required_gb", "available_gb")),
    mart("fct_memory_fit_tests",
         unique("test_id"),
         percent("fragmentation_pct"),
         non_negative("oom_count", "peak_memory_gb")),
    mart("fct_price_quotes",
         unique("quote_id"),
         not_null("provider"),
         currency("currency"),
         positive("price")),
    mart("fct_quality_outcomes_daily",
         unique_together("workload_id", "day"),
         not_null("workload_id", "day"),
         non_negative("produced", "accepted"),
         ordered("accepted", "produced"),
         ratio("accepted_ratio")),
    mart("fct_training_runs",
         unique("run_id"),
         not_null("workload_id"),
         non_negative("gpu_hours", "restarts"),
         ordered("started_at", "ended_at")),
    mart("fct_workload_cost_lines",
         unique("cost_line_id"),
         not_null("workload_id", "period", "component", "amount"),
         currency("currency")),
)

SUITES: tuple[Suite, ...] = RAW_SUITES + MART_SUITES


@cache
def _context() -> Any:
    import great_expectations as gx  # heavy import, only when a check runs

    ctx = gx.get_context(mode="ephemeral")
    try:
        from great_expectations.data_context.types.base import ProgressBarsConfig

        ctx.variables.progress_bars = ProgressBarsConfig(globally=False)
    except Exception:  # progress bars are cosmetic; older/newer GX may name this differently
        pass
    return ctx


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    """GX compares numbers as floats; Decimal objects are converted for validation only.

    Frames read from DuckDB already hold DECIMAL as float64; this is for frames built by hand.
    """
    decimal_cols = [c for c in df.columns if df[c].dtype == object
                    and df[c].head(1000).map(lambda v: isinstance(v, Decimal)).any()]
    if not decimal_cols:
        return df
    out = df.copy()
    for col in decimal_cols:
        out[col] = out[col].astype(float)
    return out


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(float(value)) if isinstance(value, (int, float, Decimal)) else f"'{value}'"


def _suspect_predicate(cls_name: str, kw: dict[str, Any]) -> str | None:
    """SQL that selects the rows an expectation could reject (None: no such shortcut).

    It only chooses which rows GX sees besides the sample; GX's own verdict is the result.
    """
    col = _q(kw["column"]) if "column" in kw else None
    if cls_name == "ExpectColumnValuesToNotBeNull":
        return f"{col} is null"
    if cls_name == "ExpectColumnValuesToBeInSet":
        values = ", ".join(_lit(v) for v in kw["value_set"]) or "null"
        return f"({col} is not null and {col} not in ({values}))"
    if cls_name == "ExpectColumnValuesToBeBetween":
        parts = []
        if kw.get("min_value") is not None:
            parts.append(f"{col} {'<=' if kw.get('strict_min') else '<'} {_lit(kw['min_value'])}")
        if kw.get("max_value") is not None:
            parts.append(f"{col} {'>=' if kw.get('strict_max') else '>'} {_lit(kw['max_value'])}")
        return "(" + " or ".join(parts) + ")" if parts else None
    if cls_name == "ExpectColumnPairValuesAToBeGreaterThanB":
        op = "<" if kw.get("or_equal") else "<="
        return f"({_q(kw['column_A'])} {op} {_q(kw['column_B'])})"
    if cls_name == "ExpectColumnValuesToMatchRegex":
        return f"({col} is not null and not regexp_matches({col}::varchar, {_lit(kw['regex'])}))"
    return None


def _key_columns(suite: Suite) -> list[list[str]]:
    """Column sets the suite expects to be unique."""
    keys = []
    for cls_name, kw in suite.expectations:
        if cls_name == "ExpectColumnValuesToBeUnique":
            keys.append([kw["column"]])
        elif cls_name == "ExpectCompoundColumnsToBeUnique":
            keys.append(list(kw["column_list"]))
    return keys


SUSPECT_ROWS = 1_000  # per kind of suspicion, on top of the sample


def read_frame(con: duckdb.DuckDBPyConnection, suite: Suite) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The rows a suite validates, and metadata saying how they were chosen.

    Only the columns the expectations name are read (a column the table lacks is left out, so
    its expectation fails and names it). A table of at most `suite.sample_rows` rows is read
    whole. A bigger one is read as a reservoir sample with a fixed seed (the same table state
    always gives the same sample) plus up to SUSPECT_ROWS rows DuckDB finds that an expectation
    could reject (a null, a value outside the set or range, a pair out of order, a duplicated
    key): a sample alone would miss a rare bad row and every duplicate. DuckDB returns DECIMAL
    as float64, which is how GX compares numbers anyway.
    """
    present = {r[0] for r in con.execute(
        "select column_name from information_schema.columns where table_schema = ? and table_name = ?",
        [suite.schema, suite.table]).fetchall()}
    if not present:
        raise LookupError(f"table {suite.target} does not exist")
    wanted = suite.columns()
    cols = [c for c in wanted if c in present]
    select = ", ".join(_q(c) for c in cols) or "1 as _row"
    source = f"{_q(suite.schema)}.{_q(suite.table)}"
    total = con.execute(f"select count(*) from {source}").fetchone()[0]
    meta: dict[str, Any] = {"rows": total, "missing_columns": ", ".join(c for c in wanted if c not in present)}
    if suite.sample_rows is None or total <= suite.sample_rows:
        df = con.execute(f"select {select} from {source}").df()
        meta.update(rows_validated=len(df), sampled="no: every row")
        return df, meta

    sample = f"using sample {suite.sample_rows} rows (reservoir, {SAMPLE_SEED})"
    parts = [con.execute(f"select rowid as _rid, {select} from {source} {sample}").df()]
    predicates = [p for cls_name, kw in suite.expectations
                  if all(c in present for c in _named(kw)) and (p := _suspect_predicate(cls_name, kw))]
    if predicates:
        parts.append(con.execute(
            f"select rowid as _rid, {select} from {source} where {' or '.join(predicates)} limit {SUSPECT_ROWS}").df())
    for key in _key_columns(suite):
        if all(c in present for c in key):
            parts.append(con.execute(
                f"select rowid as _rid, {select} from {source} "
                f"qualify count(*) over (partition by {', '.join(_q(c) for c in key)}) > 1 limit {SUSPECT_ROWS}").df())
    df = (pd.concat(parts, ignore_index=True).drop_duplicates("_rid").sort_values("_rid")
          .drop(columns="_rid").reset_index(drop=True))
    suspects = len(df) - len(parts[0])
    meta.update(rows_validated=len(df), sampled=(
        f"{sample}: {len(parts[0]):,} of {total:,} rows, plus {suspects:,} suspect rows "
        f"(nulls, out-of-set/range values, pairs out of order, duplicated keys; at most {SUSPECT_ROWS:,} per kind)"))
    return df, meta


def _named(kw: dict[str, Any]) -> list[str]:
    return [kw[k] for k in ("column", "column_A", "column_B") if k in kw] + list(kw.get("column_list", ()))


def validate(suite: Suite, df: pd.DataFrame) -> tuple[bool, list[str]]:
    """Run a suite on a DataFrame; returns (success, one line per failed expectation)."""
    import great_expectations as gx

    ctx = _context()
    name = f"suite_{suite.schema}_{suite.table}"
    try:
        source = ctx.data_sources.get(name)
    except Exception:
        source = ctx.data_sources.add_pandas(name)
    asset = source.add_dataframe_asset(f"{name}_{len(source.assets)}")
    batch = asset.add_batch_definition_whole_dataframe("all").get_batch(batch_parameters={"dataframe": _plain(df)})
    gx_suite = gx.ExpectationSuite(name=f"{name}_{len(source.assets)}")
    for cls_name, kwargs in suite.expectations:
        gx_suite.add_expectation(getattr(gx.expectations, cls_name)(**kwargs))
    result = batch.validate(gx_suite)
    failures = [_describe(r) for r in result.results if not r.success]
    return result.success, failures


def _describe(r: Any) -> str:
    kwargs = ", ".join(f"{k}={v}" for k, v in r.expectation_config.kwargs.items()
                       if k not in ("batch_id", "value_set"))
    head = f"{r.expectation_config.type}({kwargs})"
    error = (r.exception_info or {}).get("exception_message") if r.exception_info else None
    if error:
        return f"{head}: {error.strip().splitlines()[0][:200]}"
    return (f"{head}: {r.result.get('unexpected_count', '?')} unexpected, "
            f"e.g. {r.result.get('partial_unexpected_list', [])[:3]}")


def run_suite(con: duckdb.DuckDBPyConnection, suite: Suite) -> tuple[bool, list[str], dict[str, Any]]:
    """Read a suite's rows from the working database and validate them; metadata includes seconds."""
    started = time.perf_counter()
    df, meta = read_frame(con, suite)
    passed, failures = validate(suite, df)
    meta["seconds"] = round(time.perf_counter() - started, 3)
    return passed, failures, meta
