-- Ledger cost per day: each ledger_focus line's EffectiveCost on the days of its charge period
-- (ChargePeriodStart's day; a line spanning several days is spread evenly over them, a line
-- without an end or shorter than a day stays on its start day), with the dimensions anomalies are
-- watched on and the sub-dimensions a root cause is named in.
-- Days after the currency's data horizon are not invented: the last day a usage-based line covers
-- (any line's, when there is no usage-based one). A monthly fee or credit spread over its month would
-- otherwise run on past the last delivered usage, and every one of those days would read as a drop.
-- In the reporting currency (docs/cost_model.md, "Anomalies and forecasts"): each day's cost converts
-- at that day's rate (fct_fx_rates_daily), so a team billed in CAD and USD has one series; `currency`
-- is the reporting currency, `native_currency` and `native_cost` keep what was billed. A day without a
-- rate within the lookback window stays in its native currency (its own series, never added to the
-- converted one) and the warning check on native_currency lists it.
{%- set line_last_day = "case when ChargePeriodEnd > ChargePeriodStart then cast(ChargePeriodEnd - interval 1 second as date)
                           else cast(ChargePeriodStart as date) end" %}
with horizon as (
    select
        BillingCurrency as currency,
        coalesce(
            max(case when ChargeFrequency = 'Usage-Based' then {{ line_last_day }} end),
            max({{ line_last_day }})) as last_day
    from {{ ref('ledger_focus') }}
    where ChargePeriodStart is not null and BillingCurrency is not null
    group by BillingCurrency
),

lines as (
    select
        cast(ChargePeriodStart as date) as first_day,
        case
            when ChargePeriodEnd is null or ChargePeriodEnd <= ChargePeriodStart then 1
            else greatest(cast(ceil({{ hours_between('ChargePeriodStart', 'ChargePeriodEnd') }} / 24.0) as integer), 1)
        end as n_days,
        BillingCurrency as currency,
        EffectiveCost as cost,
        coalesce(x_team, '(none)') as team,
        coalesce(x_workload_id, '(none)') as workload,
        coalesce(ProviderName, '(none)') as provider,
        coalesce(ServiceName, '(none)') as service,
        x_gpu_model as gpu_model,
        coalesce(SkuId, '(none)') as sku,
        coalesce(ResourceId, '(none)') as resource
    from {{ ref('ledger_focus') }}
    where EffectiveCost is not null and ChargePeriodStart is not null and BillingCurrency is not null
),

spread as (
    select
        lines.first_day + cast(d.day_offset as integer) as day,
        lines.currency,
        lines.team, lines.workload, lines.provider, lines.service, lines.gpu_model, lines.sku, lines.resource,
        {{ money('lines.cost / lines.n_days') }} as cost
    from lines, {{ lateral_explode(int_series(0, 'lines.n_days - 1')) }} as d(day_offset)
),

clipped as (
    select spread.*
    from spread
    inner join horizon on horizon.currency = spread.currency
    where spread.day <= horizon.last_day
),

fx as (
    select * from {{ ref('fct_fx_rates_daily') }}
),

policy as (
    select coalesce(max(reporting_currency), 'USD') as reporting_currency from fx
),

converted as (
    select clipped.day, clipped.currency as native_currency,
           clipped.team, clipped.workload, clipped.provider, clipped.service, clipped.gpu_model, clipped.sku,
           clipped.resource, clipped.cost as native_cost,
           case when clipped.currency = policy.reporting_currency or fx.rate_to_reporting is not null
                then policy.reporting_currency else clipped.currency end as series_currency,
           case when clipped.currency = policy.reporting_currency or fx.rate_to_reporting is null then clipped.cost
                else {{ money('clipped.cost * cast(fx.rate_to_reporting as decimal(18, 10))') }} end as series_cost
    from clipped
    cross join policy
    left join fx on fx.currency = clipped.currency and fx.day = clipped.day
)

-- One name per column from here (no alias shadows an input column on any engine).
select day, series_currency as currency, native_currency,
       team, workload, provider, service, gpu_model, sku, resource,
       {{ money('sum(series_cost)') }} as cost,
       {{ money('sum(native_cost)') }} as native_cost
from converted
group by day, series_currency, native_currency, team, workload, provider, service, gpu_model, sku, resource
