-- Catches: chargeback that does not add up to the invoices. For every billing period and
-- currency, the chargeback rows (teams, shared spread, unallocated, API spend) must equal the
-- cloud bill's BilledCost of the current delivery plus the API spend, to the cent. Blocking: a
-- mismatch withholds the publication.
{{ config(meta={'dagster': {'ref': {'name': 'fct_chargeback_monthly'}}}) }}

with invoice_lines as (
    select cast(BillingPeriodStart as date) as billing_period_start, BillingCurrency as currency,
           BilledCost as amount
    from {{ ref('int_billing_charges_current') }}
    union all
    select cast(date_trunc('month', day) as date), currency, cost
    from {{ ref('fct_api_spend_daily') }}
),

invoice as (
    select billing_period_start, currency, sum(amount) as invoice_total
    from invoice_lines
    group by all
),

chargeback as (
    select billing_period_start, currency, sum(total_cost) as chargeback_total
    from {{ ref('fct_chargeback_monthly') }}
    group by all
)

select *
from invoice
full outer join chargeback using (billing_period_start, currency)
where round(coalesce(invoice_total, 0), 2) <> round(coalesce(chargeback_total, 0), 2)
