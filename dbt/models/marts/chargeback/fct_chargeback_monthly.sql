-- Chargeback per team, billing period and currency. Untagged cost is its own '(unallocated)'
-- row, so the rows of a period and currency always add up to the invoice (BilledCost).
with ledger as (
    select * from {{ ref('ledger_focus') }}
),

final as (
    select
        x_team as team_id,
        cast(BillingPeriodStart as date) as billing_period_start,
        BillingCurrency as currency,
        {{ money("sum(case when ChargeCategory not in ('Credit', 'Tax') then BilledCost else 0 end)") }} as direct_cost,
        {{ money("sum(case when ChargeCategory = 'Credit' then BilledCost else 0 end)") }} as credits,
        {{ money("sum(case when ChargeCategory = 'Tax' then BilledCost else 0 end)") }} as tax,
        {{ money("sum(EffectiveCost)") }} as effective_cost,
        {{ money("sum(BilledCost)") }} as total_cost,
        count(*) as charge_lines
    from ledger
    group by all
)

select * from final
