-- Catches a day and provider where the proxy log's API spend differs from the provider's cost
-- report by more than var('api_recon_tolerance') (default 5%): unlogged traffic, keys outside the
-- proxy, or a stale price catalog. Only days and providers present in both are compared.
{{ config(severity='warn', meta={'title': 'API spend differs from the provider cost report', 'counts': 'provider-days', 'dagster': {'ref': {'name': 'fct_api_spend_daily'}}}) }}
with logged as (
    select day, provider, currency, sum(cost) as logged_cost
    from {{ ref('fct_api_spend_daily') }}
    group by all
),

reported as (
    select day, provider, currency, cost as reported_cost
    from {{ ref('fct_api_cost_reports_daily') }}
)

select logged.day, logged.provider, logged.currency, logged_cost, reported_cost
from logged
inner join reported
    on logged.day = reported.day and logged.provider = reported.provider and logged.currency = reported.currency
where abs(logged_cost - reported_cost)
      > {{ var('api_recon_tolerance', 0.05) }} * greatest(abs(reported_cost), abs(logged_cost))
