"""The one reader of the published copy (serving.duckdb): dashboards, reports, decision records, CLI.

Every function opens a short-lived read-only connection, runs one parameterised query and closes
it, so a refresh can rename a new publication into place at any time; a batch reader shares one
connection with `reading(path)` (warehouse/serving_conn.py). Filter values are always
bound as `?` parameters; the only identifiers ever spliced into SQL come from fixed dictionaries
in this module, never from a caller's value. Money stays `Decimal` (DECIMAL(38,12) through Arrow):
rounding happens only at display (`reporting.formatting`).
"""

from __future__ import annotations

import os
from datetime import date
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

from warehouse.home import Home
from warehouse.serving_conn import NotPublished, query, reading  # noqa: F401 - the readers' API

# The cost components of fct_workload_unit_cost, in stacking order (money, same currency).
UNIT_COST_COMPONENTS = (
    "gpu_compute", "storage", "network", "checkpointing", "serving_stack", "observability",
    "platform_labor", "idle_capacity", "retry_waste", "failure_waste", "queue_overhead",
    "moderation_or_quality_filtering", "operator_review",
)
WASTE_COMPONENTS = ("idle_capacity", "retry_waste", "failure_waste")
# Spend breakdowns: dimension name -> (table, dimension column, period column, money column).
# Identifiers come only from here; callers pick a key.
SPEND_DIMENSIONS: dict[str, tuple[str, str, str, str]] = {
    "team": ("ledger_focus", "x_team", "BillingPeriodStart", "BilledCost"),
    "provider": ("ledger_focus", "ProviderName", "BillingPeriodStart", "BilledCost"),
    "gpu_model": ("ledger_focus", "x_gpu_model", "BillingPeriodStart", "BilledCost"),
    "workload_type": ("fct_workload_unit_cost", "workload_type", "period", "all_in_cost"),
}


def serving_path(home: str | os.PathLike[str] | None = None) -> Path:
    """Where the published copy lives for this home (resolved as `warehouse.home.resolve_home`)."""
    return Home.at(home).serving_db


def schema(path: Path) -> dict[str, set[str]]:
    """Published tables and their columns (lower-cased: DuckDB identifiers are case-insensitive)."""
    try:
        st = Path(path).stat()
    except FileNotFoundError:
        return {}
    # A publication is renamed into place (new inode, new mtime), so this key changes with every refresh;
    # caching spares a connection per filter and section, which is most of a page's render time.
    return _schema(str(path), st.st_ino, st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=8)
def _schema(path: str, inode: int, mtime_ns: int, size: int) -> dict[str, set[str]]:
    df = query(Path(path), "select table_name, column_name from information_schema.columns "
                           "where table_schema = 'main'")
    out: dict[str, set[str]] = {}
    for table, column in zip(df["table_name"], df["column_name"]):
        out.setdefault(table.lower(), set()).add(column.lower())
    return out


def require(path: Path, table: str, columns: tuple[str, ...] | list[str] = ()) -> set[str]:
    """The table's columns; raises NotPublished naming what is missing."""
    cols = schema(path).get(table.lower())
    if cols is None:
        raise NotPublished(f"table {table} is not published yet")
    missing = [c for c in columns if c.lower() not in cols]
    if missing:
        raise NotPublished(f"{table} has no column {', '.join(missing)} yet")
    return set(cols)  # a copy: the cached set must not be changed by callers


def publication(path: Path) -> dict[str, Any] | None:
    """The publication row (run_id, started_at, published_at, checks ...) or None."""
    try:
        require(path, "publication")
    except NotPublished:
        return None
    df = query(path, "select * from publication order by published_at desc limit 1")
    return None if df.empty else df.iloc[0].to_dict()


def distinct(path: Path, table: str, column: str, most_common_first: bool = False) -> list[Any]:
    """Distinct non-null values of a published column (filter choices), sorted or most common first."""
    try:
        require(path, table, [column])
    except NotPublished:
        return []
    # Identifiers are verified against information_schema above, so quoting them is safe.
    order = "count(*) desc, 1" if most_common_first else "1"
    df = query(path, f'select "{column}" as v from "{table}" where "{column}" is not null group by 1 order by {order}')
    return df["v"].tolist()


def _period_filters(period_col: str) -> str:
    """SQL for optional [start, end] filters on a period column; bound as four parameters."""
    return (f"(?::date is null or cast({period_col} as date) >= ?::date) "
            f"and (?::date is null or cast({period_col} as date) <= ?::date)")


def spend_by(path: Path, dimension: str, team: str | None = None, provider: str | None = None,
             start: date | None = None, end: date | None = None) -> pd.DataFrame:
    """Spend per period, currency and one dimension (team, provider, gpu_model, workload_type)."""
    table, dim, period, money = SPEND_DIMENSIONS[dimension]
    team_col = "x_team" if table == "ledger_focus" else "team_id"
    cols = require(path, table, [dim, period, money, team_col])
    has_provider = table == "ledger_focus"
    currency = "BillingCurrency" if has_provider else ("currency" if "currency" in cols else "null")
    sql = (
        f"select cast({period} as date) as period, {currency} as currency, "
        f"coalesce(cast({dim} as varchar), '(none)') as {dimension}, sum({money}) as cost "
        f"from {table} where (?::varchar is null or {team_col} = ?) "
        + ("and (?::varchar is null or ProviderName = ?) " if has_provider else "")
        + f"and {_period_filters(period)} group by all order by period, {dimension}"
    )
    params: list[Any] = [team, team] + ([provider, provider] if has_provider else []) + [start, start, end, end]
    return query(path, sql, params)


def chargeback(path: Path, team: str | None = None, month: date | None = None,
               currency: str | None = None) -> pd.DataFrame:
    """fct_chargeback_monthly rows (all published columns) for an optional team, month and currency."""
    require(path, "fct_chargeback_monthly", ["team_id", "billing_period_start", "currency", "total_cost"])
    return query(
        path,
        "select * from fct_chargeback_monthly where (?::varchar is null or team_id = ?) "
        "and (?::date is null or billing_period_start = ?::date) and (?::varchar is null or currency = ?) "
        "order by billing_period_start, currency, team_id",
        [team, team, month, month, currency, currency],
    )


def _api_spend_sql(path: Path) -> str:
    """API spend per month and currency (its own invoice); none when this publication predates API spend."""
    if "fct_api_spend_daily" in schema(path) and require(path, "fct_api_spend_daily", ["day", "currency", "cost"]):
        return ("select cast(date_trunc('month', day) as date) as period, currency, sum(cost) as api_spend "
                "from fct_api_spend_daily group by all")
    if "api_cost" in require(path, "fct_chargeback_monthly"):
        raise NotPublished("table fct_api_spend_daily is not published yet")
    return "select null::date as period, null::varchar as currency, null::decimal(38,12) as api_spend where false"


def reconciliation(path: Path) -> pd.DataFrame:
    """Both reconciliations per billing period and currency, each with an exact difference and a flag
    (equal to the cent, as the blocking dbt test): Σ billed_cost vs Σ ledger BilledCost (the invoice),
    and Σ total_cost vs the chosen basis of the invoice (BilledCost or EffectiveCost) + API spend."""
    require(path, "fct_chargeback_monthly", ["billing_period_start", "currency", "total_cost", "billed_cost", "basis"])
    require(path, "ledger_focus", ["BillingPeriodStart", "BillingCurrency", "BilledCost", "EffectiveCost"])
    return query(path, f"""
        with x as (select billing_period_start as period, currency, basis, billed_cost as chargeback_billed,
                          total_cost as chargeback_total from fct_chargeback_monthly
                   union all by name select cast(BillingPeriodStart as date) as period, BillingCurrency as currency,
                          BilledCost as invoice_billed, coalesce(EffectiveCost, BilledCost) as invoice_amortised
                   from ledger_focus
                   union all by name select * from ({_api_spend_sql(path)})),
             r as (select period, currency, coalesce(string_agg(distinct basis, ', '),
                          (select min(basis) from fct_chargeback_monthly)) as basis, {", ".join(
                          f"coalesce(sum({c}), 0) as {c}" for c in ("invoice_billed", "chargeback_billed",
                          "invoice_amortised", "api_spend", "chargeback_total"))}
                   from x group by period, currency)
        select period, currency, basis, invoice_billed, chargeback_billed,
               chargeback_billed - invoice_billed as billed_difference,
               round(chargeback_billed, 2) = round(invoice_billed, 2) as billed_reconciled,
               case when basis = 'billed' then invoice_billed else invoice_amortised end as invoice_basis, api_spend,
               invoice_basis + api_spend as invoice_total, chargeback_total,
               chargeback_total - invoice_total as total_difference,
               round(chargeback_total, 2) = round(invoice_total, 2) as total_reconciled
        from r order by period, currency""")


def unit_costs(path: Path, team: str | None = None, workload: str | None = None,
               start: date | None = None, end: date | None = None) -> pd.DataFrame:
    """fct_workload_unit_cost rows with a waste share (idle + retry + failure over all-in)."""
    cols = require(path, "fct_workload_unit_cost", ["workload_id", "team_id", "period", "all_in_cost"])
    waste = [c for c in WASTE_COMPONENTS if c in cols]
    waste_sum = " + ".join(f"coalesce({c}, 0)" for c in waste) or "null"
    # A workload can have a benchmark and a production row in one period: basis and currency make the order total.
    order = ", ".join(["period", "workload_id", *(c for c in ("basis", "currency") if c in cols)])
    return query(
        path,
        f"select *, ({waste_sum}) as waste_cost, "
        f"case when all_in_cost = 0 then null else cast(({waste_sum}) as double) / cast(all_in_cost as double) end "
        f"as waste_share from fct_workload_unit_cost where (?::varchar is null or team_id = ?) "
        f"and (?::varchar is null or workload_id = ?) and {_period_filters('period')} order by {order}",
        [team, team, workload, workload, start, start, end, end],
    )


def utilisation(path: Path, team: str | None = None, start: date | None = None,
                end: date | None = None) -> pd.DataFrame:
    """GPU-hours per month and team: billed, used, idle, failed, and the idle share."""
    require(path, "fct_gpu_utilisation_daily", ["day", "team_id", "billed_gpu_hours", "idle_gpu_hours"])
    return query(
        path,
        "select date_trunc('month', day)::date as period, team_id, sum(billed_gpu_hours) as billed_gpu_hours, "
        "sum(used_gpu_hours) as used_gpu_hours, sum(idle_gpu_hours) as idle_gpu_hours, "
        "sum(failed_job_gpu_hours) as failed_job_gpu_hours, "
        "sum(idle_gpu_hours) / nullif(sum(billed_gpu_hours), 0) as idle_share "
        f"from fct_gpu_utilisation_daily where (?::varchar is null or team_id = ?) and {_period_filters('day')} "
        "group by all order by period, team_id",
        [team, team, start, start, end, end],
    )


# Per-workload tables and the columns a caller can rely on once require() has passed.
WORKLOAD_TABLES: dict[str, tuple[str, ...]] = {
    "fct_candidate_comparison": ("workload_id", "candidate", "effective_unit_cost", "meets_slo", "rank"),
    "fct_memory_fit": ("workload_id",),
    "fct_capacity_options": ("workload_id", "option", "break_even_utilisation", "measured_utilisation"),
    "dim_workload": ("workload_id",),
}


def workload_table(path: Path, table: str, workload: str) -> pd.DataFrame:
    """All published rows of a per-workload table (candidates, memory fit, capacity options, registry)."""
    if table not in WORKLOAD_TABLES:
        raise ValueError(f"not a per-workload table: {table}")
    require(path, table, WORKLOAD_TABLES[table])
    order = " order by rank" if table == "fct_candidate_comparison" else ""
    return query(path, f"select * from {table} where workload_id = ?{order}", [workload])


def prices(path: Path, provider: str | None = None, pricing_category: str | None = None,
           gpu_model: str | None = None) -> pd.DataFrame:
    """GPU price history (price per GPU-hour with validity and the time it was observed)."""
    require(path, "fct_gpu_price_history", ["provider", "pricing_category", "gpu_model", "price_per_gpu_hour",
                                            "valid_from", "last_observed_at"])
    return query(
        path,
        "select * from fct_gpu_price_history where (?::varchar is null or provider = ?) "
        "and (?::varchar is null or pricing_category = ?) and (?::varchar is null or gpu_model = ?) "
        "order by provider, sku, region, pricing_category, valid_from",
        [provider, provider, pricing_category, pricing_category, gpu_model, gpu_model],
    )


def stale_prices(path: Path, max_age_days: int = 7) -> pd.DataFrame:
    """Current prices (valid_to null) last observed more than max_age_days before the publication (undated
    prices have no age: serving_screens.undated_prices lists them)."""
    cols = require(path, "fct_gpu_price_history", ["valid_to", "last_observed_at"])
    require(path, "publication", ["published_at"])
    dated = "and last_observed_at_basis <> 'undated' " if "last_observed_at_basis" in cols else ""
    return query(
        path,
        "select provider, sku, region, pricing_category, gpu_model, price_per_gpu_hour, currency, last_observed_at, "
        "date_diff('day', last_observed_at, (select max(published_at) from publication)) as age_days "
        "from fct_gpu_price_history where valid_to is null "
        "and last_observed_at < (select max(published_at) from publication) - to_days(?::integer) "
        f"{dated}order by last_observed_at",
        [max_age_days],
    )


def check_results(path: Path) -> pd.DataFrame:
    """The checks of the published run: failures and warnings first (a publication before check
    statuses existed shows `passed` as pass/fail)."""
    cols = require(path, "check_results", ["check_name", "passed"])
    status = "status" if "status" in cols else "case when passed then 'pass' else 'fail' end"
    return query(path, f"select check_name, target, severity, {status} as status, detail from check_results "
                       "order by case status when 'fail' then 0 when 'error' then 1 when 'warn' then 2 else 3 end, "
                       "check_name")


def check_failures(path: Path, check_name: str) -> pd.DataFrame:
    """The rows a failing or warning check found (a few per check, as JSON text)."""
    try:
        require(path, "check_failures", ["check_name", "failing_row"])
    except NotPublished:
        return pd.DataFrame(columns=["row_number", "failing_row"])
    return query(path, "select row_number, failing_row from check_failures where check_name = ? order by row_number",
                 [check_name])


def rejects_by_source(path: Path) -> pd.DataFrame:
    """Quarantined rows per source family, format and rule."""
    require(path, "dq_rejects", ["source_family", "format", "rule"])
    return query(path, "select source_family, format, rule, count(*) as rejected_rows, "
                       "count(distinct file_hash) as files, max(first_seen) as last_seen "
                       "from dq_rejects group by all order by rejected_rows desc, source_family")


def money_story(path: Path) -> pd.DataFrame:
    """Per currency, the whole publication: invoice, chargeback (with its basis) and all-in showback, as
    `figures` (the CLI summary and `status` print these)."""
    require(path, "fct_showback_monthly", ["currency", "amount"])
    f = figures(path)
    total = f.groupby("currency")[["invoice", "chargeback", "showback"]].agg(lambda s: sum(s, Decimal(0)))
    return total.join(f.groupby("currency")["basis"].min()).reset_index()


def unpriced_gpu_hours(path: Path, team: str | None = None, month: date | None = None) -> pd.DataFrame:
    """GPU-hours no bill line, price or owned-hardware rate covers, by reason (largest first), for an optional
    team and month."""
    require(path, "fct_off_bill_usage", ["pricing_status", "reason", "gpu_hours", "team_id", "day"])
    return query(path, "select reason, sum(gpu_hours) as gpu_hours from fct_off_bill_usage "
                       "where pricing_status = 'unpriced' and (?::varchar is null or team_id = ?) "
                       "and (?::date is null or cast(date_trunc('month', day) as date) = ?::date) "
                       "group by all order by gpu_hours desc, reason", [team, team, month, month])


def figures(path: Path, team: str | None = None, start: date | None = None, end: date | None = None,
            currency: str | None = None) -> pd.DataFrame:
    """The three figures per month and currency: invoice (Σ ledger BilledCost; one team's share: Σ billed_cost),
    chargeback (Σ total_cost, with its basis), showback (Σ fct_showback_monthly.amount; null if unpublished)."""
    require(path, "fct_chargeback_monthly", ["team_id", "billing_period_start", "currency", "total_cost",
                                             "billed_cost", "basis"])
    require(path, "ledger_focus", ["BillingPeriodStart", "BillingCurrency", "BilledCost"])
    has_sb = "fct_showback_monthly" in schema(path)
    sb = ("select period, currency, sum(amount) as showback from fct_showback_monthly "
          "where (?::varchar is null or team_id = ?) group by all") if has_sb else \
        "select null::date as period, null::varchar as currency, null::decimal(38,12) as showback where ? = ?"
    return query(path, f"""
        with inv as (select cast(BillingPeriodStart as date) as period, BillingCurrency as currency,
                            sum(BilledCost) as invoice from ledger_focus where ?::varchar is null group by all
                     union all
                     select billing_period_start, currency, sum(billed_cost) from fct_chargeback_monthly
                     where team_id = ? group by all),
             cb as (select billing_period_start as period, currency, sum(total_cost) as chargeback,
                           string_agg(distinct basis, ', ') as basis
                    from fct_chargeback_monthly where (?::varchar is null or team_id = ?) group by all),
             sb as ({sb}),
             k as (select period, currency from inv union select period, currency from cb
                   union select period, currency from sb)
        select k.period, k.currency, coalesce(inv.invoice, 0) as invoice, coalesce(cb.chargeback, 0) as chargeback,
               {"coalesce(sb.showback, 0)" if has_sb else "null::decimal(38,12)"} as showback,
               coalesce(cb.basis, (select min(basis) from fct_chargeback_monthly)) as basis
        from k left join inv using (period, currency) left join cb using (period, currency)
        left join sb using (period, currency)
        where (?::varchar is null or k.currency = ?) and {_period_filters('k.period')}
        order by k.period, k.currency""",
        [team, team, team, team, team, team, currency, currency, start, start, end, end])


def _monthly(path: Path, table: str, columns: tuple[str, ...], order: str, team: str | None, month: date | None,
             currency: str | None) -> pd.DataFrame:
    require(path, table, ["team_id", "period", "currency", *columns])
    return query(path, f"select * from {table} where (?::varchar is null or team_id = ?) and (?::date is null or "
                       f"period = ?::date) and (?::varchar is null or currency = ?) order by {order}",
                 [team, team, month, month, currency, currency])


def cost_bridge(path: Path, month: date | None = None, currency: str | None = None) -> pd.DataFrame:
    """fct_cost_bridge: Invoice -> ... -> Chargeback -> ... -> All-in showback, in step order."""
    require(path, "fct_cost_bridge", ["period", "currency", "step_order", "step", "amount", "running_total"])
    return query(path, "select * from fct_cost_bridge where (?::date is null or period = ?::date) "
                       "and (?::varchar is null or currency = ?) order by period, currency, step_order",
                 [month, month, currency, currency])


def showback(path: Path, team: str | None = None, month: date | None = None,
             currency: str | None = None) -> pd.DataFrame:
    """fct_showback_monthly rows (component, cost_basis, source, bridge_step, amount)."""
    return _monthly(path, "fct_showback_monthly", ("amount", "bridge_step", "cost_basis"),
                    "period, currency, team_id, source, bridge_step, component", team, month, currency)


def team_budgets(path: Path, team: str | None = None, month: date | None = None,
                 currency: str | None = None) -> pd.DataFrame:
    """fct_team_budget_monthly: budget vs chargeback and vs all-in showback per team and month."""
    return _monthly(path, "fct_team_budget_monthly", ("budget_monthly", "chargeback_total", "showback_total"),
                    "period, currency, team_id", team, month, currency)


def usage_pricing(path: Path) -> pd.DataFrame:
    """GPU-hours on no bill line by pricing status (list-priced, owned-hardware, unpriced), reason, source and
    currency, with their amount (NULL for unpriced hours: never 0)."""
    require(path, "fct_off_bill_usage", ["pricing_status", "reason", "source_kind", "gpu_hours", "amount",
                                         "currency"])
    return query(path, "select pricing_status, reason, source_kind, currency, sum(gpu_hours) as gpu_hours, "
                       "sum(amount) as amount, count(distinct team_id) as teams from fct_off_bill_usage "
                       "group by 1, 2, 3, 4 "
                       "order by case pricing_status when 'unpriced' then 0 else 1 end, pricing_status, "
                       "gpu_hours desc, reason, source_kind")


def report_keys(path: Path, team: str | None = None, month: date | None = None) -> pd.DataFrame:
    """Every (team, month) with cost in the chargeback or the all-in showback (one report each)."""
    require(path, "fct_chargeback_monthly", ["team_id", "billing_period_start"])
    sb = ("union select team_id, period from fct_showback_monthly"
          if "fct_showback_monthly" in schema(path) else "")
    return query(path, f"select distinct team_id, cast(period as date) as period from (select team_id, "
                       f"billing_period_start as period from fct_chargeback_monthly {sb}) "
                       "where (?::varchar is null or team_id = ?) and (?::date is null or period = ?::date) "
                       "order by period, team_id", [team, team, month, month])
