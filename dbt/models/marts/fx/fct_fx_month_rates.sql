-- One rate per month and currency into the reporting currency: the rate monthly figures convert at
-- (docs/cost_model.md, "Exchange rates"). The month's effective invoice rate of the currency where
-- fct_money_reporting has one (invoice lines at their own charge days: the money table's rate), else
-- the rate of the month's first day (fct_fx_rates_daily, within the lookback window), else no row: a
-- figure needing it is not converted and says so. A month the money table could not convert (an
-- invoice line without a rate) has no row either, so no figure converts where the money table does
-- not. The reporting currency converts at 1.
-- Months: every month with money; currencies: every currency with money or with a rate.
with fx as (
    select * from {{ ref('fct_fx_rates_daily') }}
),

money as (
    select period, currency, reporting_currency, effective_rate, fx_gap_reason
    from {{ ref('fct_money_reporting') }}
),

policy as (
    select coalesce(max(reporting_currency), 'USD') as reporting_currency from money
),

months as (
    select distinct period from money
),

currencies as (
    select currency from money
    union
    select currency from fx
    union
    select reporting_currency from policy
),

rated as (
    select
        months.period,
        currencies.currency,
        policy.reporting_currency,
        case when currencies.currency = policy.reporting_currency then cast(1 as decimal(38, 12))
             -- the money table could not convert the month (a line without a rate): neither can we
             when money.fx_gap_reason is not null then cast(null as decimal(38, 12))
             when money.effective_rate is not null then money.effective_rate
             else first_day.rate_to_reporting end as rate_to_reporting,
        case when currencies.currency = policy.reporting_currency then 'reporting currency'
             when money.fx_gap_reason is not null then cast(null as string)
             when money.effective_rate is not null then 'effective rate of the month (invoice lines at their charge days)'
             when first_day.rate_to_reporting is not null
                 then 'rate of ' || cast(first_day.rate_date as string) || ' (first day of the month)'
        end as rate_basis,
        first_day.rate_source
    from months
    cross join currencies
    cross join policy
    left join money on money.period = months.period and money.currency = currencies.currency
    left join fx as first_day on first_day.currency = currencies.currency and first_day.day = months.period
)

select * from rated
where rate_to_reporting is not null
