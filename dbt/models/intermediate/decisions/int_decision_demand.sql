-- Demand and today's cost per registry workload on one horizon: a calendar month of the latest
-- production month of fct_workload_unit_cost, every currency converted into USD at its month rate
-- (fct_fx_month_rates; docs/cost_model.md, "Stage-4 candidates").
-- A few observed days are not a month: comparing their cost with a candidate billed every hour of a
-- month made every candidate look 10x dearer. So both sides are put on the same month:
--   days_observed   days with accepted outputs in the quality-filter export of that month, else
--                   days touched by the workload's training, eval or media runs
--   always-on and scheduled-batch workloads are extrapolated at their observed daily rate:
--     monthly demand     = accepted outputs / days_observed x days_in_month
--     today monthly cost = all-in cost / days_observed x days_in_month (its run-rate)
--   experiment and seasonal-burst workloads keep the observed month (a run or a burst is not daily)
-- A registry assumption `expected_monthly_outputs` overrides the demand (the row says so) and scales
-- today's cost with it. Workloads with no production month keep a row with null demand and the reason.
with workloads as (
    select workload_id, workload_type, operating_mode, assumptions from {{ ref('stg_registry__workloads') }}
),

month_rates as (
    -- Decisions are priced in USD (API price lists, registry assumptions, offers converted to USD): the
    -- month rates into USD, i.e. while the reporting currency is USD (the default).
    select period, currency, cast(rate_to_reporting as decimal(18, 10)) as rate
    from {{ ref('fct_fx_month_rates') }}
    where reporting_currency = 'USD'
),

production_currencies as (
    select unit_costs.*,
           case when unit_costs.currency = 'USD' then cast(1 as decimal(18, 10)) else month_rates.rate end as rate
    from {{ ref('fct_workload_unit_cost') }} as unit_costs
    left join month_rates on month_rates.period = unit_costs.period and month_rates.currency = unit_costs.currency
    where unit_costs.basis = 'production'
),

production_months as (
    -- Every currency of the month in USD at its month rate (the money table's), added: a workload
    -- billed in CAD or EUR has today's cost too. Outputs belong to the workload, not to a currency.
    select workload_id, period,
           sum(all_in_cost * rate) as all_in_cost,
           max(accepted_outputs) as accepted_outputs,
           max(output_basis) as output_basis,
           count(*) filter (where rate is null) as currencies_without_rate,
           {{ sorted_distinct_join('currency', ', ', 'rate is null') }} as currencies_without_rate_list,
           {{ sorted_distinct_join("currency || ' ' || cast(round(all_in_cost, 2) as string) || ' at ' || cast(round(rate, 6) as string)", '; ', "currency <> 'USD' and rate is not null") }}
               as converted_costs
    from production_currencies
    group by workload_id, period
),

production as (
    select workload_id, period, accepted_outputs, output_basis, currencies_without_rate,
           currencies_without_rate_list, converted_costs,
           case when currencies_without_rate = 0 then all_in_cost end as all_in_cost,
           case when currencies_without_rate = 0 then {{ safe_unit_cost('all_in_cost', 'accepted_outputs') }} end
               as effective_unit_cost
    from production_months
    qualify row_number() over (partition by workload_id order by period desc) = 1
),

lines as (
    -- Today's compute and labour, kept apart so candidates replace the compute and keep the rest.
    select lines.workload_id, lines.period,
           sum(case when lines.component in ('gpu_compute', 'api_usage', 'idle_capacity', 'retry_waste', 'failure_waste')
                    then lines.amount * lines.rate else 0 end) as compute_cost,
           sum(case when lines.component = 'platform_labor' then lines.amount * lines.rate else 0 end) as platform_labor
    from (
        select cost_lines.*,
               case when cost_lines.currency = 'USD' then cast(1 as decimal(18, 10)) else month_rates.rate end as rate
        from {{ ref('int_workload_cost_lines') }} as cost_lines
        left join month_rates on month_rates.period = cost_lines.period and month_rates.currency = cost_lines.currency
        where cost_lines.basis = 'production'
    ) as lines
    group by lines.workload_id, lines.period
),

-- Observed days per workload and month, counted on each side before the join: joining the dated
-- outputs and the runs to the production month together made one row per output day x run (30 x
-- ~3,300 per workload at 256 GPUs x 30 days) for count(distinct) to take apart again.
output_days as (
    select workload_id, cast(date_trunc('month', day) as date) as period, count(distinct day) as days
    from {{ ref('stg_benchmarks__quality_outcomes') }}
    where accepted > 0
    group by workload_id, cast(date_trunc('month', day) as date)
),

run_days as (
    select workload_id, cast(date_trunc('month', cast(started_at as date)) as date) as period,
           count(distinct cast(started_at as date)) as days
    from (
        select workload_id, started_at from {{ ref('stg_benchmarks__training_runs') }}
        union all select workload_id, started_at from {{ ref('stg_benchmarks__eval_runs') }}
        union all select workload_id, started_at from {{ ref('stg_benchmarks__media_batches') }}
    ) as runs
    where workload_id is not null and started_at is not null
    group by workload_id, cast(date_trunc('month', cast(started_at as date)) as date)
),

observed as (
    -- Joins, not correlated subqueries: Spark plans these. One production month per workload.
    select production.workload_id,
           coalesce(output_days.days, 0) as output_days,
           coalesce(run_days.days, 0) as run_days
    from production
    left join output_days
        on output_days.workload_id = production.workload_id and output_days.period = production.period
    left join run_days
        on run_days.workload_id = production.workload_id and run_days.period = production.period
),

shaped as (
    select
        workloads.workload_id,
        workloads.workload_type,
        workloads.operating_mode,
        production.period as today_period,
        production.all_in_cost as today_period_cost,
        production.effective_unit_cost as today_unit_cost,
        production.accepted_outputs as today_accepted_outputs,
        production.output_basis,
        lines.compute_cost as today_period_compute_cost,
        lines.platform_labor as today_period_platform_labor,
        cast(day(last_day(production.period)) as integer) as days_in_month,
        case when observed.output_days > 0 then observed.output_days
             when observed.run_days > 0 then observed.run_days end as days_observed,
        cast({{ json_text('workloads.assumptions', "'expected_monthly_outputs'") }} as double) as expected_monthly_outputs,
        production.converted_costs,
        production.currencies_without_rate_list,
        production.workload_id is not null and production.currencies_without_rate = 0 as has_production
    from workloads
    left join production using (workload_id)
    left join observed using (workload_id)
    left join lines on lines.workload_id = production.workload_id and lines.period = production.period
),

scaled as (
    select
        shaped.*,
        case when not has_production then null
             when expected_monthly_outputs is not null
                 then expected_monthly_outputs / nullif(cast(today_accepted_outputs as double), 0)
             when operating_mode in ('always-on', 'scheduled batch') and days_observed is not null
                 then cast(days_in_month as double) / days_observed
             else 1.0 end as extrapolation_factor,
        case when not has_production then null
             when expected_monthly_outputs is not null then 'registry expected_monthly_outputs'
             when operating_mode in ('always-on', 'scheduled batch') and days_observed is not null
                 then 'daily run-rate: x ' || cast(days_in_month as string) || '/' || cast(days_observed as string)
                      || ' (' || operating_mode || ': accepted outputs and cost per observed day x days in the month)'
             when operating_mode in ('always-on', 'scheduled batch')
                 then 'observed month as is (no dated outputs or runs to find the observed days)'
             else 'observed month as is (' || operating_mode || ': runs and bursts are not daily)' end as demand_extrapolation
    from shaped
),

final as (
    select
        workload_id,
        workload_type,
        operating_mode,
        today_period,
        days_observed,
        days_in_month,
        days_in_month * 24 as hours_in_month,
        round(extrapolation_factor, 6) as extrapolation_factor,
        demand_extrapolation,
        today_period_cost,
        today_accepted_outputs,
        -- Scaled in DOUBLE, cast to DECIMAL and rounded there to 6 decimals: no binary residue.
        {{ money('round(' ~ money('cast(today_period_cost as double) * extrapolation_factor') ~ ', 6)') }} as today_monthly_cost,
        {{ money('round(' ~ money('cast(coalesce(today_period_compute_cost, 0) as double) * extrapolation_factor') ~ ', 6)') }}
            as today_compute_monthly,
        {{ money('round(' ~ money('cast(coalesce(today_period_platform_labor, 0) as double) * extrapolation_factor') ~ ', 6)') }}
            as today_platform_labor,
        today_unit_cost,
        cast(today_accepted_outputs as double) * extrapolation_factor as monthly_accepted_demand,
        case when has_production then
            'production ' || cast(today_period as string) || ': ' || output_basis || '; ' || demand_extrapolation
            || coalesce('; in USD at the month rates: ' || converted_costs, '')
        end as demand_basis,
        case when today_period is null then 'no production month in fct_workload_unit_cost'
             when not has_production then 'production ' || cast(today_period as string) || ': no USD rate for '
                  || currencies_without_rate_list || ' in the month: the cost of today is not converted' end
            as demand_missing_reason
    from scaled
)

select * from final
