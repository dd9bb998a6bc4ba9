"""Readers for the Overview's first screen: the all-in showback split by how it was measured, idle cost and
waste, the estimate that dominates, and the largest actions.

Same rules as `warehouse.serving`: read-only queries through `serving.query`, values bound as parameters,
money kept as Decimal (every split and step is an exact sum, so the parts add up to the figure to the cent).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd

from warehouse.serving import query, require, schema

ZERO = Decimal(0)
# The all-in showback split by how each amount was measured, in the order the Overview draws them.
SPLIT_PARTS = ("Billed", "Owned hardware", "List-priced estimates", "Other estimates", "Labour")
IDLE_COMPONENTS = ("idle_cost", "idle_capacity")
WASTE_COMPONENTS = (*IDLE_COMPONENTS, "retry_waste", "failure_waste")
DOMINANT_SHARE = Decimal("0.5")  # one estimate above half of the all-in showback is flagged


def _month_sql(col: str) -> str:
    return f"(?::date is null or cast(date_trunc('month', {col}) as date) = ?::date)"


def showback_split(path: Path, team: str | None = None, month: date | None = None,
                   currency: str | None = None) -> dict[str, Decimal]:
    """The all-in showback in five exact parts: Billed (on an invoice: the amortised chargeback and API spend),
    Owned hardware (owned sites at their rates), List-priced estimates (GPU-hours x an observed list price),
    Other estimates (registry assumptions and policy rates) and Labour (platform labour)."""
    require(path, "fct_showback_monthly", ["team_id", "period", "currency", "component", "cost_basis", "source",
                                           "amount"])
    df = query(path, """
        select case when source = 'chargeback' then 'Billed'
                    when component = 'platform_labor' then 'Labour'
                    when cost_basis = 'owned-hardware' or source = 'owned hardware' then 'Owned hardware'
                    when cost_basis = 'list-priced' then 'List-priced estimates'
                    else 'Other estimates' end as part, sum(amount) as amount
        from fct_showback_monthly where (?::varchar is null or team_id = ?) and (?::date is null or period = ?::date)
          and currency = ? group by all""", [team, team, month, month, currency])
    got = dict(zip(df["part"], df["amount"]))
    return {part: got.get(part, ZERO) for part in SPLIT_PARTS}


def waste_by_month(path: Path, team: str | None = None, month: date | None = None,
                   currency: str | None = None) -> pd.DataFrame:
    """Per month: idle cost (idle capacity on bills, in run-priced pools and on owned sites), waste (idle +
    retries + failures) and the all-in showback they are a share of, from fct_showback_monthly."""
    require(path, "fct_showback_monthly", ["team_id", "period", "currency", "component", "amount"])
    idle = ", ".join(f"'{c}'" for c in IDLE_COMPONENTS)  # fixed names from this module, never a caller's value
    waste = ", ".join(f"'{c}'" for c in WASTE_COMPONENTS)
    return query(path, f"""
        select period, coalesce(sum(amount) filter (where component in ({idle})), 0) as idle,
               coalesce(sum(amount) filter (where component in ({waste})), 0) as waste,
               coalesce(sum(amount), 0) as all_in
        from fct_showback_monthly where (?::varchar is null or team_id = ?) and (?::date is null or period = ?::date)
          and currency = ? group by period order by period""", [team, team, month, month, currency])


def idle_and_waste(path: Path, team: str | None = None, month: date | None = None,
                   currency: str | None = None) -> dict[str, Decimal]:
    """`waste_by_month` summed over the selection: idle, waste and all_in (exact Decimals, 0 when none)."""
    df = waste_by_month(path, team, month, currency)
    return {k: sum(df[k], ZERO) for k in ("idle", "waste", "all_in")}


def largest_estimate(path: Path, team: str | None = None, month: date | None = None,
                     currency: str | None = None) -> dict[str, Any] | None:
    """The largest priced GPU work on no bill (one workload, or one team's work without a workload, at one
    pricing status), with its GPU-hours and amount; None when there is none."""
    if "fct_off_bill_usage" not in schema(path):
        return None
    df = query(path, f"""
        select coalesce(workload_id, team_id) as name, workload_id is not null as is_workload, pricing_status,
               sum(gpu_hours) as gpu_hours, sum(amount) as amount
        from fct_off_bill_usage where amount is not null and currency = ? and (?::varchar is null or team_id = ?)
          and {_month_sql('day')} group by all order by amount desc, name limit 1""",
               [currency, team, team, month, month])
    return None if df.empty else df.iloc[0].to_dict()


def top_actions(path: Path, team: str | None = None, currency: str | None = None, limit: int = 3) -> pd.DataFrame:
    """The largest actions by monthly value: per workload its best eligible route (switch) and its cheapest
    route still pending evidence (run the benchmark that settles it), and spend anomalies above their band
    (investigate); largest value first, at most one action of each kind per workload."""
    parts = []
    params: list[Any] = []
    needed = {"workload_id", "candidate", "status", "evidence", "evidence_to_run", "monthly_savings", "currency"}
    if needed <= schema(path).get("fct_candidate_comparison", set()):  # an older publication has no statuses
        team_join = ("left join dim_workload w using (workload_id)" if "dim_workload" in schema(path)
                     else "left join (select null::varchar as workload_id, null::varchar as team_id) w using (workload_id)")
        parts.append(f"""
            select * exclude (n) from (
              select case when c.status = 'eligible' then 'switch' else 'benchmark' end as kind, c.workload_id,
                     w.team_id, c.candidate, c.evidence, c.evidence_to_run, c.monthly_savings as monthly_value,
                     c.currency, null::date as day,
                     row_number() over (partition by c.workload_id, c.status = 'eligible'
                                        order by c.monthly_savings desc, c.candidate) as n
              from fct_candidate_comparison c {team_join}
              where c.status in ('eligible', 'eligible pending evidence') and c.monthly_savings > 0
                and (?::varchar is null or w.team_id = ?) and (?::varchar is null or c.currency = ?))
            where n = 1""")
        params += [team, team, currency, currency]
    if {"dimension", "dimension_value", "direction", "impact_abs", "root_cause", "currency", "day"} <= \
            schema(path).get("fct_cost_anomalies", set()):
        # An anomaly names a team only on the team dimension; others are company-wide and kept unfiltered.
        parts.append("""
            select 'investigate', case when dimension = 'workload' then dimension_value end,
                   case when dimension = 'team' then dimension_value end, dimension || ' ' || dimension_value,
                   root_cause, null, impact_abs, currency, day
            from fct_cost_anomalies where direction = 'spike' and impact_abs > 0
              and (?::varchar is null or dimension <> 'team' or dimension_value = ?)
              and (?::varchar is null or currency = ?)""")
        params += [team, team, currency, currency]
    if not parts:
        return pd.DataFrame(columns=["kind", "workload_id", "team_id", "candidate", "evidence", "evidence_to_run",
                                     "monthly_value", "currency", "day"])
    union = " union all ".join(f"({p})" for p in parts)
    return query(path, f"select * from ({union}) order by monthly_value desc, workload_id limit {int(limit)}", params)
