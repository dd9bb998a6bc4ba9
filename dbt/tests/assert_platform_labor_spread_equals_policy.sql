-- Catches: platform labour that is created or lost when it is spread over workloads. For every
-- month with production cost, the spread amounts must add up to the policy's monthly amount.
{{ config(meta={'dagster': {'ref': {'name': 'fct_workload_cost_lines'}}}) }}

with spread as (
    select period, sum(amount) as spread
    from {{ ref('int_workload_cost_lines') }}
    where component = 'platform_labor'
    group by all
),

policy as (
    select platform_labor_monthly from {{ ref('int_cost_policies') }}
)

select spread.period, spread.spread, policy.platform_labor_monthly
from spread, policy
where abs(spread.spread - policy.platform_labor_monthly) > 0.01
