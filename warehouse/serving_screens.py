"""Readers for the dashboard screens that `warehouse.serving` does not have: filter choices that cascade,
current prices with their age, stale prices by provider.

Same rules as `warehouse.serving`: one short read-only query each (through `serving.query`), values bound
as parameters, identifiers only from the fixed dictionaries below, money kept as Decimal.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pandas as pd

from warehouse.serving import NotPublished, query, require, schema

# Filter source -> SELECTs yielding (team, workload, month, currency); a source is the data a page filters.
# Only tables that are published are used, so an older publication still gets its filters.
FILTER_SOURCES: dict[str, tuple[tuple[str, str], ...]] = {
    "chargeback": (("fct_chargeback_monthly", ("select team_id as team, null::varchar as workload, "
                    "cast(billing_period_start as date) as month, currency from fct_chargeback_monthly")),),
    "overview": (("fct_chargeback_monthly", ("select team_id as team, null::varchar as workload, "
                  "cast(billing_period_start as date) as month, currency from fct_chargeback_monthly")),
                 ("fct_showback_monthly", ("select team_id, null::varchar, cast(period as date), currency "
                  "from fct_showback_monthly"))),
    "unit_cost": (("fct_workload_unit_cost", ("select team_id as team, workload_id as workload, "
                   "cast(period as date) as month, currency from fct_workload_unit_cost")),),
    "candidates": (("fct_candidate_comparison", ("select w.team_id as team, c.workload_id as workload, "
                    "null::date as month, c.currency from fct_candidate_comparison c "
                    "left join dim_workload w using (workload_id)")),),
    # Anomalies and forecasts: the team series the detector watches and the teams forecast, per currency.
    "anomalies": (("fct_anomaly_coverage", ("select dimension_value as team, null::varchar as workload, "
                   "null::date as month, currency from fct_anomaly_coverage where dimension = 'team'")),
                  ("fct_spend_forecast", ("select team_id, null::varchar, null::date, currency "
                   "from fct_spend_forecast"))),
    "prices": (("fct_gpu_price_history", ("select null::varchar as team, null::varchar as workload, "
                "null::date as month, currency from fct_gpu_price_history")),),
}
KEY_COLUMNS = ["team", "workload", "month", "currency"]


def filter_keys(path: Path, source: str) -> pd.DataFrame:
    """Every (team, workload, month, currency) that has data in a page's source, with its row count.

    The pages narrow each filter's choices to the rows matching the filters above it, so a choice never
    leads to an empty page."""
    published = schema(path)
    parts = [sql for table, sql in FILTER_SOURCES[source] if table in published]
    if source == "candidates" and parts and "dim_workload" not in published:
        # No registry published: the workloads still filter, without their teams.
        parts = [("select null::varchar as team, workload_id as workload, null::date as month, currency "
                 "from fct_candidate_comparison")]
    if not parts:
        raise NotPublished(f"table {FILTER_SOURCES[source][0][0]} is not published yet")
    union = " union all ".join(f"({p})" for p in parts)
    return query(path, f"select team, workload, month, currency, count(*) as n from ({union}) "
                       "group by all order by all")


def _published_at_sql() -> str:
    return "(select max(published_at) from publication)"


def current_prices(path: Path, currency: str | None = None) -> pd.DataFrame:
    """The cheapest current price (valid_to null) per GPU model and pricing category in one currency, with
    its offer, when it was last observed, its age in days at publication and how many current offers exist.
    An undated price (nothing in its file dates it) has no age: `last_observed_at_basis` says 'undated'."""
    cols = require(path, "fct_gpu_price_history", ["provider", "sku", "region", "pricing_category", "gpu_model",
                                                   "price_per_gpu_hour", "currency", "valid_to", "last_observed_at"])
    require(path, "publication", ["published_at"])
    basis = _basis_sql(cols)
    return query(path, f"""
        with cur as (select *, row_number() over (partition by gpu_model, pricing_category, currency
                                                  order by price_per_gpu_hour, provider, sku, region) as rn,
                            count(*) over (partition by gpu_model, pricing_category, currency) as offers,
                            max(price_per_gpu_hour) over (partition by gpu_model, pricing_category, currency)
                              as highest_price
                     from fct_gpu_price_history
                     where valid_to is null and gpu_model is not null and (?::varchar is null or currency = ?))
        select gpu_model, pricing_category, currency, price_per_gpu_hour, highest_price, offers, provider, sku,
               region, last_observed_at, {basis} as last_observed_at_basis,
               case when {basis} <> 'undated'
                    then date_diff('day', last_observed_at, {_published_at_sql()}) end as age_days
        from cur where rn = 1 order by gpu_model, pricing_category""", [currency, currency])


def _basis_sql(cols: set[str]) -> str:
    # A publication from before the basis was kept cannot tell: it says so instead of passing for dated.
    return "last_observed_at_basis" if "last_observed_at_basis" in cols else "'not_recorded'"


def undated_prices(path: Path) -> pd.DataFrame:
    """Current prices nothing dates (no timestamp in the file or its name, not fetched), per provider."""
    cols = require(path, "fct_gpu_price_history", ["provider", "valid_to", "gpu_model"])
    if "last_observed_at_basis" not in cols:
        return pd.DataFrame(columns=["provider", "undated_prices", "gpu_models", "sources"])
    return query(path, """
        select provider, count(*) as undated_prices, count(distinct gpu_model) as gpu_models,
               string_agg(distinct last_source, ', ' order by last_source) as sources
        from fct_gpu_price_history where valid_to is null and last_observed_at_basis = 'undated'
        group by provider order by undated_prices desc, provider""")


def price_history(path: Path, gpu_model: str, currency: str | None = None) -> pd.DataFrame:
    """Every price interval of one GPU model (in one currency), oldest first, without the lineage hashes."""
    cols = require(path, "fct_gpu_price_history", ["gpu_model", "price_per_gpu_hour", "valid_from", "valid_to",
                                                   "last_observed_at"])
    return query(path, "select provider, sku, region, pricing_category, gpu_count, currency, price_per_gpu_hour, "
                       "price_per_hour, valid_from, valid_to, last_observed_at, "
                       f"{_basis_sql(cols)} as last_observed_at_basis, observations, source "
                       "from fct_gpu_price_history where gpu_model = ? and (?::varchar is null or currency = ?) "
                       "order by provider, sku, region, pricing_category, valid_from",
                 [gpu_model, currency, currency])


def stale_by_provider(path: Path, max_age_days: int = 7) -> pd.DataFrame:
    """Current prices last observed more than max_age_days before the publication, per provider:
    how many, the oldest and newest age, and the GPU models they cover. Undated prices have no age and are
    listed apart (`undated_prices`)."""
    cols = require(path, "fct_gpu_price_history", ["provider", "valid_to", "last_observed_at"])
    require(path, "publication", ["published_at"])
    return query(path, f"""
        select provider, count(*) as stale_prices, count(distinct gpu_model) as gpu_models,
               max(date_diff('day', last_observed_at, {_published_at_sql()})) as oldest_age_days,
               min(date_diff('day', last_observed_at, {_published_at_sql()})) as newest_age_days,
               min(last_observed_at) as oldest_observed_at
        from fct_gpu_price_history
        where valid_to is null and last_observed_at < {_published_at_sql()} - to_days(?::integer)
          and {_basis_sql(cols)} <> 'undated'
        group by provider order by stale_prices desc, provider""", [max_age_days])


def charges_through(path: Path) -> date | None:
    """The last day any charge covers: the latest bill line's charge period (its end is exclusive) or API
    spend day; None when neither is published. The banner, `status` and reports say 'charges through <day>'
    so a fresh publication of old charges never looks current."""
    published = schema(path)
    parts = []
    if "ledger_focus" in published and "chargeperiodend" in published["ledger_focus"]:
        parts.append("select cast(max(ChargePeriodEnd) - interval 1 microsecond as date) as d from ledger_focus")
    elif "ledger_focus" in published and "chargeperiodstart" in published["ledger_focus"]:
        parts.append("select cast(max(ChargePeriodStart) as date) as d from ledger_focus")
    if "fct_api_spend_daily" in published:
        parts.append("select max(day) as d from fct_api_spend_daily")
    if not parts:
        return None
    value = query(path, f"select max(d) as d from ({' union all '.join(parts)})")["d"].iloc[0]
    return None if value is None or pd.isna(value) else pd.Timestamp(value).date()


def money_converted(path: Path) -> pd.DataFrame:
    """fct_money_reporting: the three figures per month and native currency beside their value in the reporting
    currency, with the rate basis and any gap; empty (never an error) when an older publication lacks it."""
    if "fct_money_reporting" not in schema(path):
        return pd.DataFrame()
    return query(path, "select * from fct_money_reporting order by period, currency")


def commitments(path: Path) -> pd.DataFrame:
    """fct_contract_commitment_usage: committed vs used per FOCUS commitment; empty when none is published."""
    if "fct_contract_commitment_usage" not in schema(path):
        return pd.DataFrame()
    return query(path, "select * from fct_contract_commitment_usage order by ContractCommitmentId")


def month_rates(path: Path) -> pd.DataFrame:
    """fct_fx_month_rates: the rate every monthly figure converts at, per month and currency (empty when an older
    publication lacks it)."""
    if "fct_fx_month_rates" not in schema(path):
        return pd.DataFrame(columns=["period", "currency", "reporting_currency", "rate_to_reporting", "rate_basis"])
    return query(path, "select period, currency, reporting_currency, rate_to_reporting, rate_basis, rate_source "
                       "from fct_fx_month_rates order by period, currency")


def rates_used(path: Path) -> dict | None:
    """The reporting currency and the rates behind every conversion: sources, observation dates used by the
    monthly figures, and the oldest rate a day may take (None when no rate is published)."""
    if "fct_fx_rates_daily" not in schema(path):
        return None
    daily = query(path, "select max(reporting_currency) as reporting_currency, min(rate_date) as first, "
                        "max(rate_date) as last, max(rate_age_days) as max_age, "
                        "string_agg(distinct rate_source, ', ' order by rate_source) as sources "
                        "from fct_fx_rates_daily").iloc[0].to_dict()
    if daily["reporting_currency"] is None:
        return None
    return daily


def team_budgets_converted(path: Path, team: str | None = None, month: date | None = None) -> pd.DataFrame:
    """fct_team_budget_converted in the columns of fct_team_budget_monthly, every amount in the reporting
    currency (budget, chargeback and all-in showback of every currency at the month rates); empty when an
    older publication lacks it."""
    if "fct_team_budget_converted" not in schema(path):
        return pd.DataFrame()
    return query(path, "select team_id, period, reporting_currency as currency, budget_reporting as budget_monthly, "
                       "chargeback_reporting as chargeback_total, showback_reporting as showback_total, "
                       "budget_reporting - chargeback_reporting as budget_remaining_chargeback, "
                       "budget_reporting - showback_reporting as budget_remaining_showback, budget_currency, "
                       "budget_monthly as budget_in_budget_currency, budget_remaining_showback as budget_remaining_in_budget_currency, "
                       "native_spend, spend_rates, fx_gap_reason from fct_team_budget_converted "
                       "where (?::varchar is null or team_id = ?) and (?::date is null or period = ?::date) "
                       "order by period, team_id", [team, team, month, month])
