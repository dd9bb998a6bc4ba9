-- Rent, reserve, buy or use an API, per workload, for the shape of its best eligible GPU candidate
-- (fct_candidate_comparison), compared like with like (docs/cost_model.md, "Capacity options"):
--   hours needed: always-on endpoints are billed every hour of the demand month; batch/experiment shapes the
--                 hours the candidate needs (billed_hours)
--   on-demand     instances x price per instance-hour x hours needed
--   spot          instances x spot rate (observed for the instance, else on-demand x the spot
--                 factor) x hours needed x (1 + policy spot_interruption_overhead): not a commitment
--   reserved-1y/3y instances x on-demand rate x category factor x the month's hours (billed every hour)
--   owned         capex (GPUs x capex_per_gpu x (1 + host_network_capex_share)) as an annuity over
--                 amortisation_months at cost_of_capital_annual / 12, + TDP x the month's hours x PUE x
--                 electricity, + operations per GPU-month; a GPU without capex keeps its row,
--                 monthly cost null, capex_status 'capex unknown'
--   api route     the best eligible API candidate (its gateway is its platform labour)
-- Every GPU option carries the same scope as its candidate (storage/network/serving stack and
-- platform labour), as the API option carries its gateway. Break-even utilisation = the share of
-- the month's hours at on-demand that costs as much as the fixed-cost option.
with workloads as (
    select * from {{ ref('stg_registry__workloads') }}
),

policies as (
    select * from {{ ref('int_decision_policies') }}
),

owned as (
    select max(value) as owned_hardware from {{ ref('stg_registry__policies') }} where policy = 'owned_hardware'
),

candidates as (
    select * from {{ ref('fct_candidate_comparison') }}
),

best_gpu as (
    select candidates.*, offers.spot_price_per_instance_hour, offers.tdp_w
    from candidates
    left join {{ ref('int_decision_instance_offers') }} as offers
        on offers.gpu_model = candidates.gpu_model and offers.gpus_per_instance = candidates.gpus_per_instance
    where candidates.route_kind = 'gpu' and candidates.eligible
    qualify row_number() over (partition by candidates.workload_id order by candidates.rank, candidates.candidate) = 1
),

best_api as (
    select *
    from candidates
    where route_kind = 'api' and eligible
    qualify row_number() over (partition by workload_id order by rank, candidate) = 1
),

usage as (
    -- Hours are DECIMAL: divide as DOUBLE so every engine returns the same type (Spark keeps DECIMAL).
    select workload_id, cast(sum(used_gpu_hours) as double) / nullif(cast(sum(billed_gpu_hours) as double), 0)
        as measured_utilisation
    from {{ ref('fct_gpu_utilisation_daily') }}
    where workload_id is not null and billed_gpu_hours > 0
    group by workload_id
),

base as (
    select
        best_gpu.workload_id, best_gpu.candidate, best_gpu.gpu_model, best_gpu.instance_type, best_gpu.instances,
        best_gpu.gpu_count as gpus_needed, best_gpu.tdp_w,
        cast(best_gpu.price_per_instance_hour as double) as rate,
        cast(best_gpu.spot_price_per_instance_hour as double) as spot_rate,
        cast(best_gpu.billed_hours as double) as hours_needed,
        cast(best_gpu.storage_network as double) + cast(best_gpu.platform_labor as double) as scope_cost,
        workloads.operating_mode, workloads.operating_boundary,
        usage.measured_utilisation,
        -- The candidate's own month (days x 24: 720 h in a 30-day month); the policy's 730-h average
        -- month only where the candidate has none. Commitments and owned hardware bill every hour of it.
        coalesce(cast(best_gpu.days_in_month as double) * 24, cast(policies.hours_per_month as double)) as month_hours,
        policies.*
    from best_gpu
    inner join workloads using (workload_id)
    left join usage using (workload_id)
    cross join policies
),

owned_costs as (
    select
        base.workload_id,
        cast({{ json_text(json_member('owned.owned_hardware', "'capex_per_gpu'"), 'base.gpu_model') }} as double) as capex_per_gpu,
        cast({{ json_text('owned.owned_hardware', "'amortisation_months'") }} as double) as months,
        cast({{ json_text('owned.owned_hardware', "'pue'") }} as double) as pue,
        cast({{ json_text('owned.owned_hardware', "'electricity_per_kwh'") }} as double) as electricity,
        cast({{ json_text('owned.owned_hardware', "'ops_per_gpu_month'") }} as double) as ops_per_gpu_month
    from base
    cross join owned
),

options as (
    select workload_id, 'on-demand' as option, candidate, instances * rate * hours_needed as compute_cost,
           hours_needed as hours_billed, cast(null as double) as break_even_utilisation, 'known' as capex_status,
           case when operating_mode = 'always-on' then 'always-on endpoint: every hour of the month billed (' || cast(round(hours_needed) as string) || ' h), no idle-hour discount'
                else 'pay for the ' || cast(round(hours_needed, 1) as string) || ' h the demand needs' end as basis_note
    from base
    union all
    select workload_id, 'spot', candidate,
           instances * coalesce(spot_rate, rate * spot_factor) * hours_needed * (1 + spot_interruption_overhead),
           hours_needed, cast(null as double), 'known',
           'not a commitment: ' || case when spot_rate is not null then 'observed spot rate' else 'assumed: on-demand x spot factor '
               || cast(spot_factor as string) end || ' x hours needed x (1 + ' || cast(spot_interruption_overhead as string)
               || ' interruption overhead)' || case when operating_mode = 'always-on'
               then '; an always-on SLO endpoint on spot needs an on-demand fallback' else '' end
    from base
    where spot_rate is not null or spot_factor is not null
    union all
    select workload_id, category.option, candidate, instances * rate * category.factor * month_hours,
           month_hours, category.factor, 'known',
           'on-demand rate x ' || category.option || ' factor ' || cast(category.factor as string) || ', billed every hour (' || cast(cast(month_hours as integer) as string) || ' h)'
    from base
    cross join (
        select 'reserved-1y' as option, reserved_1y_factor as factor from policies
        union all select 'reserved-3y', reserved_3y_factor from policies
    ) as category
    where category.factor is not null
    union all
    select base.workload_id, 'owned', base.candidate,
           base.gpus_needed * (
               owned_costs.capex_per_gpu * (1 + base.host_network_capex_share)
                   * case when base.cost_of_capital_annual > 0
                          then (base.cost_of_capital_annual / 12) / (1 - power(1 + base.cost_of_capital_annual / 12, -owned_costs.months))
                          else 1 / owned_costs.months end
               + base.tdp_w / 1000.0 * base.month_hours * owned_costs.pue * owned_costs.electricity
               + owned_costs.ops_per_gpu_month),
           base.month_hours,
           base.gpus_needed * (
               owned_costs.capex_per_gpu * (1 + base.host_network_capex_share)
                   * case when base.cost_of_capital_annual > 0
                          then (base.cost_of_capital_annual / 12) / (1 - power(1 + base.cost_of_capital_annual / 12, -owned_costs.months))
                          else 1 / owned_costs.months end
               + base.tdp_w / 1000.0 * base.month_hours * owned_costs.pue * owned_costs.electricity
               + owned_costs.ops_per_gpu_month) / nullif(base.instances * base.rate * base.month_hours, 0),
           case when owned_costs.capex_per_gpu is null then 'capex unknown' else 'known' end,
           case when owned_costs.capex_per_gpu is null
                then 'capex unknown: no owned_hardware.capex_per_gpu entry for ' || base.gpu_model
                else 'capex x (1 + ' || cast(base.host_network_capex_share as string) || ' host/network) as an annuity over '
                     || cast(owned_costs.months as string) || ' months at ' || cast(base.cost_of_capital_annual as string)
                     || ' a year + TDP x ' || cast(cast(base.month_hours as integer) as string) || ' h x PUE x electricity + operations per GPU-month' end
    from base
    inner join owned_costs using (workload_id)
    union all
    select base.workload_id, 'api route', best_api.candidate,
           cast(best_api.gpu_cost as double) + cast(best_api.failure_loss as double),
           cast(null as double), cast(null as double), 'known',
           'best eligible API candidate; its scope is the gateway upkeep'
    from base
    inner join best_api using (workload_id)
),

final as (
    select
        options.workload_id,
        options.option,
        options.candidate,
        base.gpu_model,
        base.instance_type,
        base.instances,
        base.gpus_needed,
        'USD' as currency,
        -- Rounded in DECIMAL to 8 decimals: 12.24 x 720 in DOUBLE is 8812.799999999999.
        {{ money('round(' ~ money('options.compute_cost') ~ ', 8)') }} as compute_cost,
        {{ money('round(' ~ money("case when options.option = 'api route' then cast(best_api.platform_labor as double) + cast(best_api.storage_network as double) else base.scope_cost end") ~ ', 8)') }}
            as scope_cost,
        {{ money('round(' ~ money('options.compute_cost') ~ ', 8)') }}
            + {{ money('round(' ~ money("case when options.option = 'api route' then cast(best_api.platform_labor as double) + cast(best_api.storage_network as double) else base.scope_cost end") ~ ', 8)') }}
            as monthly_cost,
        round(options.hours_billed, 2) as hours_billed,
        round(options.break_even_utilisation, 4) as break_even_utilisation,
        -- Always-on needs every hour of its month; commitments are billed on the same month's hours.
        round(case when base.operating_mode = 'always-on' then 1.0
                   else least(1.0, base.hours_needed / base.month_hours) end, 4) as needed_utilisation,
        round(base.measured_utilisation, 4) as measured_utilisation,
        case when base.operating_mode = 'always-on' then 'always-on: every hour needed'
             else 'hours the Stage-4 candidate needs for the production demand' end as utilisation_basis,
        case when options.break_even_utilisation is null then null
             else case when base.operating_mode = 'always-on' then 1.0
                       else least(1.0, base.hours_needed / base.month_hours) end >= options.break_even_utilisation
             end as beats_on_demand,
        options.capex_status,
        options.basis_note,
        case
            when base.operating_boundary = 'managed API' then 'managed model/API route'
            when base.operating_boundary in ('dedicated cluster', 'on-prem', 'private network')
                then 'dedicated training cluster or private GPU cloud'
            when base.operating_mode in ('experiment', 'developer notebook') then 'model API or short-term rental'
            when base.operating_mode in ('seasonal burst', 'scheduled batch') then 'spot/marketplace GPUs or batch model API'
            when base.operating_mode = 'always-on' then 'reserved GPUs, dedicated endpoint or reserved cluster'
            else 'model API or short-term rental'
        end as guide_label
    from options
    inner join base using (workload_id)
    left join best_api on best_api.workload_id = options.workload_id
)

select * from final
