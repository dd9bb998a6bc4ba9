-- One unit cost per workload, month and basis in the reporting currency (docs/cost_model.md,
-- "Exchange rates"): fct_workload_unit_cost keeps one row per currency, each divided by all the
-- workload's outputs; here the currencies' all-in costs are converted and added, then divided once.
-- A currency's cost converts at the month's effective rate of that currency (fct_money_reporting:
-- the invoice lines at their own days), else at the rate of the month's first day. A workload with a
-- currency that cannot be converted has no converted cost, and says which currency and why.
with unit_costs as (
    select * from {{ ref('fct_workload_unit_cost') }}
),

money as (
    select period, currency, reporting_currency, effective_rate from {{ ref('fct_money_reporting') }}
),

fx as (
    select * from {{ ref('fct_fx_rates_daily') }}
),

policy as (
    select coalesce(max(reporting_currency), 'USD') as reporting_currency from fx
),

rated as (
    select unit_costs.workload_id, unit_costs.team_id, unit_costs.workload_type, unit_costs.period, unit_costs.basis,
           unit_costs.currency, unit_costs.all_in_cost, unit_costs.accepted_outputs, unit_costs.unit_of_success,
           policy.reporting_currency,
           case when unit_costs.currency = policy.reporting_currency then cast(1 as decimal(18, 10))
                else cast(coalesce(money.effective_rate, fx.rate_to_reporting) as decimal(18, 10)) end as rate
    from unit_costs
    cross join policy
    left join money on money.period = unit_costs.period and money.currency = unit_costs.currency
    left join fx on fx.currency = unit_costs.currency and fx.day = unit_costs.period
),

summed as (
    select workload_id, team_id, workload_type, period, basis, reporting_currency,
           max(unit_of_success) as unit_of_success,
           -- outputs belong to the workload, not to a currency: every currency row carries them all
           max(accepted_outputs) as accepted_outputs,
           count(*) as currencies,
           count(*) filter (where rate is null) as currencies_without_rate,
           sum(all_in_cost * rate) as converted,
           {{ sorted_distinct_join("currency || ' ' || cast(round(all_in_cost, 2) as string) || case when currency <> reporting_currency then ' at ' || coalesce(cast(round(rate, 6) as string), 'no rate') else '' end", '; ') }}
               as native_costs,
           {{ sorted_distinct_join('currency', ', ', 'rate is null') }} as currencies_without_rate_list
    from rated
    group by workload_id, team_id, workload_type, period, basis, reporting_currency
)

select
    workload_id,
    team_id,
    workload_type,
    period,
    basis,
    reporting_currency,
    case when currencies_without_rate = 0 then {{ money('converted') }} end as all_in_cost_reporting,
    accepted_outputs,
    unit_of_success,
    case when currencies_without_rate = 0 then {{ safe_unit_cost('converted', 'accepted_outputs') }} end
        as effective_unit_cost_reporting,
    currencies,
    native_costs,
    case when currencies_without_rate > 0
         then 'no rate for ' || currencies_without_rate_list || ' in ' || cast(period as string)
              || ' within the lookback window: not converted' end as fx_gap_reason
from summed
