-- Chargeback per team, billing period and currency on two bases, both kept: billed_cost (the
-- team's share of the cloud invoice, FOCUS BilledCost) and amortised_cost (EffectiveCost), plus
-- API spend. total_cost is the basis the registry chooses (policy chargeback_basis, default
-- amortised) plus api_cost; direct, shared, idle, unused commitment, credits and tax split that
-- basis. '(unallocated)' and '(idle)' are rows of their own, so the rows of a period and currency
-- add up to the invoices to the cent on either basis. Budgets from the registry, with the
-- remaining amount and a month-end forecast: for the month still open (today falls in it) the
-- cost so far is extended straight-line to the month's end; a closed month's forecast is its actual.
with lines as (
    select * from {{ ref('int_chargeback_lines') }}
),

policies as (
    select * from {{ ref('int_cost_policies') }}
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

chosen as (
    select lines.*, lines.basis = policies.chargeback_basis as is_chosen, policies.chargeback_basis
    from lines
    cross join policies
),

totals as (
    {%- set kinds = ['direct_cost', 'shared_cost', 'idle_cost', 'unused_commitment', 'api_cost', 'credits', 'tax'] %}
    select
        team_id,
        billing_period_start,
        currency,
        max(chargeback_basis) as basis,
        {{ money("sum(case when basis = 'billed' and line_kind <> 'api_cost' then amount else 0 end)") }} as billed_cost,
        {{ money("sum(case when basis = 'amortised' and line_kind <> 'api_cost' then amount else 0 end)") }}
            as amortised_cost,
        {%- for kind in kinds %}
        {{ money("sum(case when is_chosen and line_kind = '" ~ kind ~ "' then amount else 0 end)") }} as {{ kind }},
        {%- endfor %}
        {{ money('sum(case when is_chosen then amount else 0 end)') }} as total_cost,
        sum(case when is_chosen then 1 else 0 end) as charge_lines
    from chosen
    group by team_id, billing_period_start, currency
),

final as (
    select
        totals.team_id,
        totals.billing_period_start,
        totals.currency,
        totals.direct_cost,
        totals.shared_cost,
        totals.idle_cost,
        totals.api_cost,
        totals.credits,
        totals.tax,
        totals.total_cost,
        totals.charge_lines,
        case when teams.budget_currency = totals.currency then teams.budget_monthly end as budget_monthly,
        case when teams.budget_currency = totals.currency
             then {{ money('teams.budget_monthly - totals.total_cost') }} end as budget_remaining,
        case
            when current_date > last_day(totals.billing_period_start) or days_seen.last_cost_day is null
                or days_seen.last_cost_day >= last_day(totals.billing_period_start) then totals.total_cost
            else {{ money('totals.total_cost * cast(day(last_day(totals.billing_period_start)) as decimal(10, 4))
                           / cast(greatest(day(days_seen.last_cost_day), 1) as decimal(10, 4))') }}
        end as forecast_month_end,
        totals.basis,
        totals.billed_cost,
        totals.amortised_cost,
        totals.unused_commitment
    from totals
    left join teams on teams.team_id = totals.team_id
    left join days_seen
        on days_seen.billing_period_start = totals.billing_period_start and days_seen.currency = totals.currency
)

select * from final
