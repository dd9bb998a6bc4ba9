-- Catches: a bridge that does not connect the three figures. Per month and currency:
--   the first step (Invoice) = Σ BilledCost of the cloud invoice lines;
--   the 'Chargeback' running total = Σ fct_chargeback_monthly.total_cost;
--   the last running total ('All-in showback') = Σ fct_showback_monthly.amount;
--   the showback's chargeback part = Σ amortised_cost + api_cost of the chargeback;
-- each to the cent. Blocking.
{{ config(meta={'dagster': {'ref': {'name': 'fct_cost_bridge'}}}) }}

with bridge as (
    select * from {{ ref('fct_cost_bridge') }}
),

invoice as (
    select cast(BillingPeriodStart as date) as period, BillingCurrency as currency, sum(BilledCost) as invoice_total
    from {{ ref('ledger_focus') }}
    group by all
),

chargeback as (
    select billing_period_start as period, currency, sum(total_cost) as chargeback_total,
           sum(amortised_cost + api_cost) as amortised_chargeback
    from {{ ref('fct_chargeback_monthly') }}
    group by all
),

showback as (
    select period, currency, sum(amount) as showback_total,
           sum(case when source = 'chargeback' then amount else 0 end) as showback_invoiced
    from {{ ref('fct_showback_monthly') }}
    group by all
),

steps as (
    select
        period,
        currency,
        min_by(amount, step_order) as first_amount,
        min_by(step, step_order) as first_step,
        max_by(running_total, step_order) as last_running_total,
        max(case when step = 'Chargeback' then running_total end) as chargeback_step
    from bridge
    group by all
),

final as (
    select *
    from steps
    full outer join invoice using (period, currency)
    full outer join chargeback using (period, currency)
    full outer join showback using (period, currency)
    where coalesce(first_step, '') <> 'Invoice'
       or round(coalesce(first_amount, 0), 2) <> round(coalesce(invoice_total, 0), 2)
       or round(coalesce(chargeback_step, 0), 2) <> round(coalesce(chargeback_total, 0), 2)
       or round(coalesce(last_running_total, 0), 2) <> round(coalesce(showback_total, 0), 2)
       or round(coalesce(showback_invoiced, 0), 2) <> round(coalesce(amortised_chargeback, 0), 2)
)

select * from final
