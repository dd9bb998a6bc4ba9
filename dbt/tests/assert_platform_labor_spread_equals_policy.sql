-- Catches: platform labour that is created or lost when it is spread over workloads. Labour is a
-- monthly run-rate prorated to the days any workload was active (docs/cost_model.md, "Platform
-- labour"): for every month with labour lines, the lines must add up to platform_labor_monthly x
-- active days / days in the month, every line of the month must state the same days, and the days
-- must lie in 1..days in the month (so the spread never exceeds the policy).
{{ config(meta={'dagster': {'ref': {'name': 'int_workload_cost_lines'}}}) }}

with lines as (
    select period, amount,
           cast(regexp_extract(detail, 'x ([0-9]+)/([0-9]+) days', 1) as int) as active_days,
           cast(regexp_extract(detail, 'x ([0-9]+)/([0-9]+) days', 2) as int) as month_days
    from {{ ref('int_workload_cost_lines') }}
    where component = 'platform_labor'
),

spread as (
    select period, sum(amount) as spread, min(active_days) as active_days, max(active_days) as max_active_days,
           min(month_days) as month_days
    from lines
    group by period
),

policy as (
    select platform_labor_monthly from {{ ref('int_cost_policies') }}
)

select spread.period, spread.spread, spread.active_days, spread.max_active_days, spread.month_days,
       policy.platform_labor_monthly
from spread, policy
where spread.active_days is null
   or spread.active_days <> spread.max_active_days
   or spread.month_days <> day(last_day(spread.period))
   or spread.active_days < 1 or spread.active_days > spread.month_days
   or abs(spread.spread - policy.platform_labor_monthly * spread.active_days / spread.month_days) > 0.01
