"""Raw-table suites: what the parsers wrote into `raw.*`, checked before dbt reads it.

Part of each suite is derived from the table's contract (warehouse/contracts/*.yaml, through
`warehouse.raw`): the Dagster asset it attaches to (`raw/<family>`), the columns it may name (an
expectation on an undeclared column is an error when the suites are built, not a failing check at
night), and one type expectation per column it reads (the contract's DuckDB type as the pandas
dtypes DuckDB returns it as: a raw table created under an older contract keeps its old types,
`create table if not exists`, and a range or regex on a column of the wrong type says nothing).

The contracts declare names and types only (no required/enum/min keys), so not-null, sets, ranges,
regexes and row orderings stay hand-written below. Raw suites warn: a raw problem is quarantined per
file, and blocking here would stop every source's dbt build.
"""

from __future__ import annotations

import re

from sources.registry.workloads import WORKLOAD_TYPES
from warehouse.raw import LINEAGE_COLUMNS, contract_columns, contracts
from warehouse.reference import CURRENCIES, FOCUS_ENUMS

from .dsl import (Expectation, Suite, flat, in_set, latency_order, matches, named, non_negative, not_null, ordered,
                  percent, positive, ratio, unique, unique_together)

CHARGE_CATEGORIES = FOCUS_ENUMS["ChargeCategory"]  # Usage, Purchase, Tax, Credit, Adjustment
JOB_STATES = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY",
              "RUNNING", "PENDING")

TYPE_EXPECTATION = "ExpectColumnValuesToBeInTypeList"

# DuckDB type (leading word of the contract's type) -> the pandas dtypes `.df()` returns it as. Integer
# and boolean columns holding nulls come back as pandas' nullable dtypes (GX names them `<X>Dtype`);
# text and JSON come back as Python str objects, which GX checks value by value.
_PANDAS_TYPES: dict[str, list[str]] = {
    "DECIMAL": ["float64"], "NUMERIC": ["float64"], "DOUBLE": ["float64"], "FLOAT": ["float32", "float64"],
    "REAL": ["float32", "float64"],
    "BIGINT": ["int64", "Int64Dtype"], "INTEGER": ["int32", "Int32Dtype"], "SMALLINT": ["int16", "Int16Dtype"],
    "BOOLEAN": ["bool", "BooleanDtype"],
    "TIMESTAMP": ["datetime64[us]", "datetime64[ns]"], "DATE": ["datetime64[us]", "datetime64[ns]"],
    "VARCHAR": ["str"], "JSON": ["str"],
}


def pandas_types(duckdb_type: str) -> list[str]:
    """The pandas dtypes a column of this DuckDB type is read as (ValueError for a type not mapped)."""
    head = re.match(r"[A-Z]+", duckdb_type.strip().upper())
    if not head or head.group(0) not in _PANDAS_TYPES:
        raise ValueError(f"no pandas dtype known for DuckDB type {duckdb_type!r}")
    return list(_PANDAS_TYPES[head.group(0)])


def declared_types(table: str) -> dict[str, str]:
    """Column -> DuckDB type of a raw table: its contract's columns plus the loader's lineage columns."""
    return {**contract_columns(table), **LINEAGE_COLUMNS}


def type_expectations(table: str, columns: list[str]) -> tuple[Expectation, ...]:
    """One type expectation per column, from the contract."""
    types = declared_types(table)
    return tuple((TYPE_EXPECTATION, {"column": c, "type_list": pandas_types(types[c])}) for c in columns)


def raw(table: str, *expectations: Expectation | tuple[Expectation, ...], blocking: bool = False,
        name: str = "") -> Suite:
    """A raw-table suite: the hand-written expectations, then the contract's types of the columns they
    name, attached to `raw/<family>` (the contract's family)."""
    hand = flat(expectations)
    declared = declared_types(table)  # ContractError when no contract declares the table
    columns = list(dict.fromkeys(c for _, kw in hand for c in named(kw)))
    undeclared = [c for c in columns if c not in declared]
    if undeclared:
        raise ValueError(f"raw.{table} suite names columns its contract does not declare: {undeclared}")
    return Suite(table, hand + type_expectations(table, columns), blocking=blocking, schema="raw",
                 asset_key=("raw", contracts()[table]["family"]), name=name)


def build_raw_suites() -> tuple[Suite, ...]:
    return (
        # A billing line without an amount or a readable currency cannot be costed. Warning, not
        # blocking: staging marks a missing currency as XXX (no currency).
        raw("billing_charges",
            not_null("BilledCost", "BillingCurrency"),
            matches("BillingCurrency", r"^[A-Z]{3}$"),
            name="gx_raw_billing_charges_usable"),
        raw("billing_charges",
            in_set("BillingCurrency", CURRENCIES),
            ordered("ChargePeriodStart", "ChargePeriodEnd"),
            ordered("BillingPeriodStart", "BillingPeriodEnd"),
            not_null("ChargePeriodStart", "ChargeCategory", "x_source_format"),
            in_set("ChargeCategory", CHARGE_CATEGORIES),
            unique_together("_file_hash", "_source_line")),
        raw("gpu_price_observations",
            positive("price"),
            not_null("price", "currency", "observed_at", "source", "provider", "sku"),
            matches("currency", r"^[A-Z]{3}$"),
            in_set("currency", CURRENCIES),
            non_negative("gpu_count")),
        raw("gpu_samples",
            percent("gpu_util_pct", "mem_copy_util_pct"),
            ratio("gr_engine_active", "sm_active", "dram_active", "tensor_active"),
            non_negative("fb_used_mib", "power_w"),
            matches("gpu_uuid", r"^GPU-"),
            not_null("source_format")),
        raw("gpu_jobs",
            percent("gpu_util_pct"),
            ratio("gpu_share", "gpu_memory_share"),
            non_negative("gpu_count", "gpu_hours", "elapsed_s"),
            ordered("started_at", "ended_at"),
            ordered("submitted_at", "started_at"),
            in_set("scheduler", ("slurm", "kubernetes")),
            in_set("state", JOB_STATES),
            not_null("job_id", "scheduler", "source_format")),
        raw("benchmark_runs",
            latency_order("median", "p99"),
            latency_order("median", "p95"),
            latency_order("p95", "p99"),
            non_negative("completed", "failed", "gpu_count", "duration_s"),
            not_null("run_id", "tool", "source_format")),
        # LiteLLM spend is what the proxy priced a request at: never negative (credits arrive in the
        # provider cost reports, not in the request log).
        raw("api_requests",
            non_negative("spend", "prompt_tokens", "completion_tokens", "cached_tokens", "total_tokens", "retries"),
            in_set("status", ("success", "failure")),
            in_set("currency", ("USD",)),
            ordered("started_at", "ended_at"),
            not_null("request_id", "started_at")),
        # An exchange rate is a positive number of one ISO 4217 currency for another.
        raw("fx_rates",
            positive("rate"),
            not_null("rate_date", "base", "quote", "rate"),
            matches("base", r"^[A-Z]{3}$"),
            matches("quote", r"^[A-Z]{3}$")),
        raw("registry_workloads",
            unique("workload_id"),
            not_null("team_id", "workload_type"),
            in_set("workload_type", WORKLOAD_TYPES)),
    )
