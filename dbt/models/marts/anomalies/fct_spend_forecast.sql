-- Spend forecast per basis, team and currency (the reporting currency: every native month total at
-- its month rate, fct_fx_month_rates; a month and currency without a rate stays native): chargeback
-- (fct_chargeback_monthly.total_cost) and all-in showback (fct_showback_monthly.amount: chargeback plus the cost-model lines on no bill): the
-- latest month of the basis and currency (horizon 0, month-end) and the three months after it
-- (horizons 1-3), with an interval and the date the team's registry budget is forecast to be exceeded.
-- The latest month is open when the ledger's last cost day in it is before the month's last day.
-- Method: open month -> run-rate (cost so far / days observed) x days of the month, for the month
-- end and every later month; latest month complete -> its actual at horizon 0 and the trailing mean
-- of the last (up to 3) complete months after it. Interval: +- the sample standard deviation of the
-- last (up to 6) complete months' totals when there are at least two, else +- the standard
-- deviation of the team's daily EffectiveCost in the latest month x sqrt(days forecast); an actual
-- has no interval. When neither spread is measured (one complete month and no daily series: the
-- cost-model lines have no day) the interval is NULL and forecast_status says 'interval unmeasured':
-- a zero-width interval would claim the noise is nil. A run-rate on fewer than var forecast_min_days
-- (7) observed days is 'not enough history' and has no interval either. The lower bound of a
-- forecast of spend is never below zero (a net credit, forecast < 0, keeps its symmetric interval). Breach date: at an even daily rate (the run-rate, or
-- forecast / days of the month), the first day the month's cumulative cost exceeds the budget.
{%- set line_last_day = "case when ChargePeriodEnd > ChargePeriodStart then cast(ChargePeriodEnd - interval 1 second as date)
                           else cast(ChargePeriodStart as date) end" %}
with native as (
    select 'chargeback' as basis, team_id, billing_period_start as month_start, currency, sum(total_cost) as total_cost
    from {{ ref('fct_chargeback_monthly') }}
    group by team_id, billing_period_start, currency
    union all
    select 'showback' as basis, team_id, period as month_start, currency, sum(amount) as total_cost
    from {{ ref('fct_showback_monthly') }}
    group by team_id, period, currency
),

month_rates as (
    select period, currency, reporting_currency, cast(rate_to_reporting as decimal(18, 10)) as rate
    from {{ ref('fct_fx_month_rates') }}
),

-- In the reporting currency: each native month total at its month rate (the money table's), so a team
-- billed in two currencies has one forecast; a month and currency without a rate stays native.
chargeback as (
    select native.basis, native.team_id, native.month_start,
           case when month_rates.rate is not null then month_rates.reporting_currency else native.currency end as currency,
           sum(case when month_rates.rate is not null then native.total_cost * month_rates.rate
                    else native.total_cost end) as total_cost
    from native
    left join month_rates on month_rates.period = native.month_start and month_rates.currency = native.currency
    group by native.basis, native.team_id, native.month_start,
             case when month_rates.rate is not null then month_rates.reporting_currency else native.currency end
),

-- The month's data horizon: the last day a usage-based line covers (any line's without one), so a
-- monthly fee running to the month's end does not make a month whose usage stops mid-way look complete.
last_days_native as (
    select cast(BillingPeriodStart as date) as month_start, BillingCurrency as currency,
           coalesce(max(case when ChargeFrequency = 'Usage-Based' then {{ line_last_day }} end),
                    max({{ line_last_day }})) as last_cost_day
    from {{ ref('ledger_focus') }}
    group by cast(BillingPeriodStart as date), BillingCurrency
),

-- a converted series runs to the last cost day of any currency in it
last_days as (
    select last_days_native.month_start,
           coalesce(month_rates.reporting_currency, last_days_native.currency) as currency,
           max(last_days_native.last_cost_day) as last_cost_day
    from last_days_native
    left join month_rates
        on month_rates.period = last_days_native.month_start and month_rates.currency = last_days_native.currency
    group by last_days_native.month_start, coalesce(month_rates.reporting_currency, last_days_native.currency)
),

latest as (
    select basis, currency, max(month_start) as month_start from chargeback group by basis, currency
),

months as (
    select
        chargeback.*,
        day(last_day(chargeback.month_start)) as month_days,
        least(greatest(coalesce(case when last_days.last_cost_day >= chargeback.month_start
                                     then day(last_days.last_cost_day) end, 0), 0),
              day(last_day(chargeback.month_start))) as days_observed
    from chargeback
    left join last_days on last_days.month_start = chargeback.month_start and last_days.currency = chargeback.currency
),

complete as (
    select months.*,
           row_number() over (partition by basis, team_id, currency order by month_start desc) as recency
    from months
    where days_observed = month_days
),

complete_stats as (
    select basis, team_id, currency,
           avg(case when recency <= 3 then total_cost end) as trailing_mean,
           -- Rounded to 1e-6: a float sum's order is not fixed across threads, and the unrounded spread
           -- moved the published interval in its 11th decimal from one build of the same rows to the next.
           round(stddev_samp(case when recency <= 6 then cast(total_cost as double) end), 6) as monthly_std,
           count(case when recency <= 6 then 1 end) as complete_months
    from complete
    group by basis, team_id, currency
),

teams_seen as (
    select distinct basis, team_id, currency from chargeback
),

base as (
    select
        teams_seen.basis,
        teams_seen.team_id,
        teams_seen.currency,
        latest.month_start as basis_month,
        coalesce(months.total_cost, 0) as actual_to_date,
        day(last_day(latest.month_start)) as month_days,
        coalesce(months.days_observed, max(months.days_observed) over (partition by teams_seen.basis, teams_seen.currency), 0)
            as days_observed,
        complete_stats.trailing_mean,
        case when complete_stats.complete_months >= 2 then complete_stats.monthly_std end as monthly_std
    from teams_seen
    inner join latest on latest.basis = teams_seen.basis and latest.currency = teams_seen.currency
    left join months
        on months.basis = teams_seen.basis and months.team_id = teams_seen.team_id
        and months.currency = teams_seen.currency and months.month_start = latest.month_start
    left join complete_stats
        on complete_stats.basis = teams_seen.basis and complete_stats.team_id = teams_seen.team_id
        and complete_stats.currency = teams_seen.currency
),

-- the ledger's daily spread of the team (both bases: the cost-model lines have no day)
daily_std as (
    select series.dimension_value as team_id, series.currency, latest.month_start,
           round(stddev_samp(cast(series.actual as double)), 6) as daily_std  -- rounded: see monthly_std
    from {{ ref('int_anomaly_daily_series') }} as series
    inner join (select distinct currency, month_start from latest) as latest on latest.currency = series.currency
    where series.dimension = 'team' and series.day >= latest.month_start and series.day <= last_day(latest.month_start)
    group by series.dimension_value, series.currency, latest.month_start
),

horizons as (
    select base.*, 0 as horizon, base.basis_month as forecast_month from base
    {%- for h in [1, 2, 3] %}
    union all
    select base.*, {{ h }} as horizon, cast(base.basis_month + interval {{ h }} month as date) as forecast_month from base
    {%- endfor %}
),

points as (
    select
        horizons.*,
        day(last_day(horizons.forecast_month)) as forecast_month_days,
        horizons.days_observed > 0 and horizons.days_observed < horizons.month_days as is_open,
        daily_std.daily_std
    from horizons
    left join daily_std
        on daily_std.team_id = horizons.team_id and daily_std.currency = horizons.currency
        and daily_std.month_start = horizons.basis_month
),

forecasts as (
    select
        points.*,
        case
            when horizon = 0 and not is_open then 'actual'
            when is_open then 'run-rate'
            when trailing_mean is not null then 'trailing mean'
            else 'actual carried'
        end as method,
        case when is_open then cast(actual_to_date as double) / days_observed end as run_rate_daily,
        case
            when horizon = 0 and not is_open then 0
            when horizon = 0 then month_days - days_observed
            else forecast_month_days
        end as days_forecast
    from points
),

valued as (
    select
        forecasts.*,
        {{ money("case
            when method = 'actual' then actual_to_date
            when method = 'run-rate' and horizon = 0 then actual_to_date * cast(month_days as decimal(10, 4)) / cast(days_observed as decimal(10, 4))
            when method = 'run-rate' then actual_to_date * cast(forecast_month_days as decimal(10, 4)) / cast(days_observed as decimal(10, 4))
            when method = 'trailing mean' then trailing_mean
            else actual_to_date end") }} as forecast,
        case
            when days_forecast = 0 then 0
            when monthly_std is not null then monthly_std
            when daily_std is not null then daily_std * sqrt(days_forecast)
        end as interval_half,
        case
            when days_forecast = 0 then 'none (actual)'
            when monthly_std is not null then 'monthly spread'
            when daily_std is not null then 'daily spread'
            else 'unmeasured'
        end as interval_basis
    from forecasts
),

teams as (
    select * from {{ ref('stg_registry__teams') }}
),

budgeted as (
    select
        valued.*,
        -- a budget in another currency converts at its rate of the basis month (the latest with rates)
        case when teams.budget_currency = valued.currency then teams.budget_monthly
             when budget_rate.rate is not null and budget_rate.reporting_currency = valued.currency
                 then {{ money('teams.budget_monthly * budget_rate.rate') }} end as budget_monthly
    from valued
    left join teams on teams.team_id = valued.team_id
    left join month_rates as budget_rate
        on budget_rate.period = valued.basis_month and budget_rate.currency = teams.budget_currency
),

breach as (
    select
        budgeted.*,
        case when method = 'run-rate' then run_rate_daily
             else cast(forecast as double) / forecast_month_days end as daily_rate,
        case
            when method = 'actual' then 'actual'
            when method = 'run-rate' and days_observed < {{ var('forecast_min_days', 7) }} then 'not enough history'
            when interval_half is null then 'interval unmeasured'
            else 'forecast'
        end as forecast_status
    from budgeted
)

select
    concat(basis, '|', team_id, '|', currency, '|', cast(forecast_month as string)) as forecast_id,
    basis,
    team_id,
    currency,
    basis_month,
    forecast_month,
    horizon,
    method,
    case when horizon = 0 then actual_to_date else {{ money('0') }} end as actual_to_date,
    case when horizon = 0 then days_observed else 0 end as days_observed,
    forecast,
    forecast_status,
    interval_basis,
    -- A net credit (forecast below zero) keeps its symmetric interval; spend is never forecast below zero.
    {{ money("case when forecast_status not in ('actual', 'forecast') then null
                   when forecast >= 0 then greatest(cast(forecast as double) - interval_half, 0)
                   else cast(forecast as double) - interval_half end") }} as forecast_low,
    {{ money("case when forecast_status in ('actual', 'forecast') then cast(forecast as double) + interval_half end") }}
        as forecast_high,
    budget_monthly,
    case when budget_monthly is not null then forecast > budget_monthly end as forecast_exceeds_budget,
    case when budget_monthly is not null and forecast > budget_monthly and daily_rate > 0
         then forecast_month + cast(floor(cast(budget_monthly as double) / daily_rate) as integer)
    end as budget_breach_date
from breach
