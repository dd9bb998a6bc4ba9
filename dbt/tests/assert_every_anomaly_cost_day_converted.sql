-- Warns with every day of ledger cost in a currency with no exchange rate within the lookback window
-- of that day: it stays out of the reporting-currency anomaly series (int_anomaly_cost_days keeps it
-- in a series of its own native currency) until a rate for the day is loaded (inputs/fx/).
{{ config(severity='warn', meta={'title': 'Anomaly cost days without an exchange rate', 'counts': 'cost days', 'dagster': {'ref': {'name': 'int_anomaly_cost_days'}}}) }}
with policy as (
    select coalesce(max(reporting_currency), 'USD') as reporting_currency from {{ ref('fct_fx_rates_daily') }}
)

select days.native_currency, min(days.day) as first_day, max(days.day) as last_day,
       count(distinct days.day) as days, {{ money('sum(days.native_cost)') }} as native_cost
from {{ ref('int_anomaly_cost_days') }} as days
cross join policy
where days.native_currency <> policy.reporting_currency and days.currency = days.native_currency
group by days.native_currency
