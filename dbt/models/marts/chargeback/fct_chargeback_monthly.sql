-- Chargeback per team, billing period and currency: direct, shared, API spend, credits and tax.
-- '(unallocated)' is its own row, so the rows of a period and currency add up to the invoices
-- (cloud BilledCost plus API spend) to the cent. Budgets from the registry, with the remaining
-- amount and a month-end forecast: for the month still open (today falls in it) the cost so far
-- is extended straight-line to the month's end; a closed month's forecast is its actual.
with lines as (
    select * from {{ ref('int_chargeback_lines') }}
),

teams as (
    select * from {{ ref('stg_registry__teams') }}
),

days_seen as (
    select cast(BillingPeriodStart as date) as billing_period_start, BillingCurrency as currency,
           max(cast(ChargePeriodEnd as date)) as last_cost_day
    from {{ ref('ledger_focus') }}
    group by all
),

totals as (
    select
        team_id,
        billing_period_start,
        currency,
        {{ money("sum(case when line_kind = 'direct_cost' then amount else 0 end)") }} as direct_cost,
        {{ money("sum(case when line_kind = 'shared_cost' then amount else 0 end)") }} as shared_cost,
        {{ money("sum(case when line_kind = 'idle_cost' then amount else 0 end)") }} as idle_cost,
        {{ money("sum(case when line_kind = 'api_cost' then amount else 0 end)") }} as api_cost,
        {{ money("sum(case when line_kind = 'credits' then amount else 0 end)") }} as credits,
        {{ money("sum(case when line_kind = 'tax' then amount else 0 end)") }} as tax,
        {{ money('sum(amount)') }} as total_cost,
        count(*) as charge_lines
    from lines
    group by all
),

final as (
    select
        totals.*,
        case when teams.budget_currency = totals.currency then teams.budget_monthly end as budget_monthly,
        case when teams.budget_currency = totals.currency
             then {{ money('teams.budget_monthly - totals.total_cost') }} end as budget_remaining,
        case
            when current_date > last_day(totals.billing_period_start) or days_seen.last_cost_day is null
                or days_seen.last_cost_day >= last_day(totals.billing_period_start) then totals.total_cost
            else {{ money('totals.total_cost * cast(day(last_day(totals.billing_period_start)) as decimal(10, 4))
                           / cast(greatest(day(days_seen.last_cost_day), 1) as decimal(10, 4))') }}
        end as forecast_month_end
    from totals
    left join teams on teams.team_id = totals.team_id
    left join days_seen
        on days_seen.billing_period_start = totals.billing_period_start and days_seen.currency = totals.currency
)

select * from final
