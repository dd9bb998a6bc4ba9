-- Catches: a billing delivery whose lines do not add up to the invoice (lost lines, a doctored
-- or truncated export). For every stated invoice total, the current ledger's BilledCost for the
-- same billing account, period and currency must match to the cent. Blocking.
{{ config(meta={'dagster': {'ref': {'name': 'ledger_focus'}}}) }}

with invoices as (
    select * from {{ ref('stg_billing__invoices') }}
),

ledger as (
    select BillingAccountId, BillingPeriodStart, BillingCurrency, sum(BilledCost) as ledger_total
    from {{ ref('ledger_focus') }}
    group by all
),

final as (
    select invoices.InvoiceId, invoices.BillingAccountId, invoices.BillingPeriodStart, invoices.BillingCurrency,
           invoices.InvoiceTotal, coalesce(ledger.ledger_total, 0) as ledger_total
    from invoices
    left join ledger
        on ledger.BillingAccountId = invoices.BillingAccountId
        and ledger.BillingPeriodStart = invoices.BillingPeriodStart
        and ledger.BillingCurrency = invoices.BillingCurrency
    where round(invoices.InvoiceTotal, 2) <> round(coalesce(ledger.ledger_total, 0), 2)
)

select * from final
