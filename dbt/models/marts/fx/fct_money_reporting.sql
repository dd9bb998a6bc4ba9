-- The three money figures (Invoice -> Chargeback -> All-in showback) per month and native currency,
-- each beside its value in the reporting currency (docs/cost_model.md, "Exchange rates").
-- The invoice converts line by line at the rate of each line's charge date (ChargePeriodStart); its
-- converted total over its native total is the month's effective rate, at which the chargeback and
-- the showback of the same month and currency convert, so figures that reconcile natively still
-- reconcile converted. A month with no invoice line in that currency (API spend only, estimates)
-- converts at the rate of its first day. A line or month without a rate within the lookback window
-- leaves the converted figure null and says why; nothing converts at 1.0 by default.
with fx as (
    select * from {{ ref('fct_fx_rates_daily') }}
),

policy as (
    select coalesce(max(reporting_currency), 'USD') as reporting_currency from fx
),

invoice_lines as (
    select cast(ledger.BillingPeriodStart as date) as period, ledger.BillingCurrency as currency,
           ledger.BilledCost as billed,
           -- One DECIMAL product in both cases (a CASE mixing DECIMAL scales falls back to DOUBLE).
           ledger.BilledCost * cast(case when ledger.BillingCurrency = policy.reporting_currency then 1
                                         else fx.rate_to_reporting end as decimal(18, 10)) as billed_reporting,
           ledger.BillingCurrency = policy.reporting_currency or fx.rate_to_reporting is not null as converted,
           cast(ledger.ChargePeriodStart as date) as charge_day
    from {{ ref('ledger_focus') }} as ledger
    cross join policy
    left join fx on fx.currency = ledger.BillingCurrency and fx.day = cast(ledger.ChargePeriodStart as date)
),

invoice as (
    select period, currency,
           sum(billed) as invoice,
           case when bool_and(converted) then sum(billed_reporting) end as invoice_reporting,
           count(*) filter (where not converted) as lines_without_rate,
           min(case when not converted then charge_day end) as first_day_without_rate
    from invoice_lines
    group by period, currency
),

chargeback as (
    select billing_period_start as period, currency, sum(total_cost) as chargeback
    from {{ ref('fct_chargeback_monthly') }}
    group by billing_period_start, currency
),

showback as (
    select cast(period as date) as period, currency, sum(amount) as showback
    from {{ ref('fct_showback_monthly') }}
    group by cast(period as date), currency
),

keys as (
    select period, currency from invoice
    union
    select period, currency from chargeback
    union
    select period, currency from showback
),

joined as (
    select keys.period, keys.currency, policy.reporting_currency,
           invoice.invoice, invoice.invoice_reporting, invoice.lines_without_rate, invoice.first_day_without_rate,
           chargeback.chargeback, showback.showback,
           start_fx.rate_to_reporting as period_start_rate, start_fx.rate_date as period_start_rate_date,
           start_fx.rate_source
    from keys
    cross join policy
    left join invoice on invoice.period = keys.period and invoice.currency = keys.currency
    left join chargeback on chargeback.period = keys.period and chargeback.currency = keys.currency
    left join showback on showback.period = keys.period and showback.currency = keys.currency
    left join fx as start_fx on start_fx.currency = keys.currency and start_fx.day = keys.period
),

rated as (
    select joined.*,
           case when currency = reporting_currency then cast(1 as double)
                when invoice is not null and invoice <> 0 and invoice_reporting is not null
                    then cast(invoice_reporting as double) / cast(invoice as double)
                when invoice is null or invoice = 0 then cast(period_start_rate as double) end as effective_rate,
           case when currency = reporting_currency then 'reporting currency'
                when invoice is not null and invoice <> 0 and invoice_reporting is not null
                    then 'invoice lines at the rate of their charge day; chargeback and showback at the effective rate of the month'
                when (invoice is null or invoice = 0) and period_start_rate is not null
                    then 'rate of ' || cast(period_start_rate_date as string) || ' (the month has no invoice line in this currency)'
           end as fx_basis,
           case when currency <> reporting_currency and invoice <> 0 and invoice_reporting is null
                    then cast(lines_without_rate as string) || ' invoice line(s) without a ' || currency || ' rate within the lookback window (first '
                         || cast(first_day_without_rate as string) || ')'
                when currency <> reporting_currency and (invoice is null or invoice = 0) and period_start_rate is null
                    then 'no ' || currency || ' rate within the lookback window before ' || cast(period as string)
           end as fx_gap_reason
    from joined
)

select
    period,
    currency,
    invoice,
    chargeback,
    showback,
    reporting_currency,
    {{ money('invoice_reporting') }} as invoice_reporting,
    {{ money('cast(chargeback as double) * effective_rate') }} as chargeback_reporting,
    {{ money('cast(showback as double) * effective_rate') }} as showback_reporting,
    cast(round(effective_rate, 10) as decimal(38, 12)) as effective_rate,
    fx_basis,
    rate_source,
    fx_gap_reason
from rated
