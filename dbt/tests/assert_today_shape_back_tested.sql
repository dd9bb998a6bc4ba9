-- Warns with every workload billed on a GPU instance shape that has no back-test row (route_kind
-- today_shape) in the candidate comparison: its decision cannot be checked against today's own setup.
-- The usual reason is a bill line in another currency with no exchange rate within the lookback of
-- its charge day (the back-test is then unpriced, never converted at 1.0); the row says which.
{{ config(severity='warn', meta={'title': 'Decisions without a back-test on the current setup', 'counts': 'workloads', 'dagster': {'ref': {'name': 'fct_candidate_comparison'}}}) }}
with billed as (
    select distinct workload_id
    from {{ ref('int_gpu_billing_hours_mapped') }}
    where workload_id is not null and gpu_model is not null and gpu_count >= 1 and instance_type is not null
),

compared as (
    select workload_id, max(case when route_kind = 'today_shape' then 1 else 0 end) as back_tested
    from {{ ref('fct_candidate_comparison') }}
    group by workload_id
),

unrated as (
    select mapped.workload_id, min(focus.BillingCurrency) as currency, min(cast(focus.ChargePeriodStart as date)) as first_day
    from {{ ref('int_gpu_billing_hours_mapped') }} as mapped
    inner join {{ ref('ledger_focus') }} as focus on focus.x_charge_key = mapped.x_charge_key
    left join {{ ref('fct_fx_rates_daily') }} as fx
        on fx.currency = focus.BillingCurrency and fx.day = cast(focus.ChargePeriodStart as date)
        and fx.reporting_currency = 'USD'
    where focus.BillingCurrency <> 'USD' and fx.rate_to_reporting is null
    group by mapped.workload_id
)

select
    compared.workload_id,
    case
        when unrated.workload_id is not null
            then concat('a ', unrated.currency, ' bill line has no exchange rate for its charge day (first ',
                        cast(unrated.first_day as string), ')')
        else 'no billed instance shape with a price in the demand month'
    end as reason
from compared
inner join billed on billed.workload_id = compared.workload_id
left join unrated on unrated.workload_id = compared.workload_id
where compared.back_tested = 0
