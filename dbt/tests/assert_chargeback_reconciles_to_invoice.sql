-- Catches: chargeback that does not add up to the invoices. For every billing period and
-- currency, over all chargeback rows (teams, '(unallocated)', '(idle)'), to the cent:
--   Σ billed_cost    = Σ BilledCost of the current cloud delivery (the invoice);
--   Σ amortised_cost = Σ EffectiveCost of the same lines (BilledCost where a format has none);
--   Σ api_cost       = the API spend (its own invoice);
--   Σ total_cost     = the chosen basis (policy chargeback_basis) of the cloud lines + API spend.
-- Blocking: a mismatch withholds the publication.
{{ config(meta={'dagster': {'ref': {'name': 'fct_chargeback_monthly'}}}) }}

with policies as (
    select * from {{ ref('int_cost_policies') }}
),

invoice_lines as (
    select cast(BillingPeriodStart as date) as billing_period_start, BillingCurrency as currency,
           BilledCost as billed, coalesce(EffectiveCost, BilledCost) as amortised, 0 as api
    from {{ ref('int_billing_charges_current') }}
    union all
    select cast(date_trunc('month', day) as date), currency, 0, 0, cost
    from {{ ref('fct_api_spend_daily') }}
),

invoice as (
    select
        invoice_lines.billing_period_start,
        invoice_lines.currency,
        sum(invoice_lines.billed) as invoice_billed,
        sum(invoice_lines.amortised) as invoice_amortised,
        sum(invoice_lines.api) as invoice_api,
        sum(case when policies.chargeback_basis = 'billed' then invoice_lines.billed else invoice_lines.amortised end
            + invoice_lines.api) as invoice_total
    from invoice_lines
    cross join policies
    group by invoice_lines.billing_period_start, invoice_lines.currency
),

chargeback as (
    select billing_period_start, currency, sum(billed_cost) as chargeback_billed,
           sum(amortised_cost) as chargeback_amortised, sum(api_cost) as chargeback_api,
           sum(total_cost) as chargeback_total
    from {{ ref('fct_chargeback_monthly') }}
    group by all
)

select *
from invoice
full outer join chargeback using (billing_period_start, currency)
where round(coalesce(invoice_billed, 0), 2) <> round(coalesce(chargeback_billed, 0), 2)
   or round(coalesce(invoice_amortised, 0), 2) <> round(coalesce(chargeback_amortised, 0), 2)
   or round(coalesce(invoice_api, 0), 2) <> round(coalesce(chargeback_api, 0), 2)
   or round(coalesce(invoice_total, 0), 2) <> round(coalesce(chargeback_total, 0), 2)
