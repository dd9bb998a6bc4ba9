-- Catches: chargeback that does not add up to the invoice. For every billing period and currency,
-- the chargeback rows (teams + unallocated) must equal the sum of BilledCost of the current
-- billing delivery, to the cent. Blocking: a mismatch withholds the publication.
{{ config(meta={'dagster': {'ref': {'name': 'fct_chargeback_monthly'}}}) }}

with invoice as (
    select cast(BillingPeriodStart as date) as billing_period_start, BillingCurrency as currency,
           sum(BilledCost) as invoice_total
    from {{ ref('int_billing_charges_current') }}
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
