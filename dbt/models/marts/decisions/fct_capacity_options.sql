-- Rent, reserve, buy or use an API: per workload, the monthly cost of each commercial option for
-- the hardware of its best SLO-meeting GPU candidate, and the break-even utilisation at which a
-- fixed-cost option beats paying on-demand only for the hours used (reserved: the category
-- factor; owned: amortised capex + power + operations over the on-demand month), plus the API
-- route's break-even. Measured utilisation comes from usage when the workload has any, else from
-- the Stage-4 sizing. The label is the guide's decision table for the workload's operating mode.
with workloads as (
    select * from {{ ref('stg_registry__workloads') }}
),

policies as (
    select * from {{ ref('int_cost_policies') }}
),

owned as (
    select value as owned_hardware from {{ ref('stg_registry__policies') }} where policy = 'owned_hardware'
),

gpus as (
    select gpu_model, tdp_w from {{ ref('dim_gpu') }}
),

best_gpu as (
    select workload_id, gpu_model, gpu_count, monthly_cost, accepted_outputs, gpu_cost,
           cast(split_part(split_part(notes, ' at ', 2), ' ', 1) as double) as rate_per_gpu_hour,
           cast(split_part(split_part(notes, 'replicas ', 2), ' ', 1) as double) as replicas
    from {{ ref('fct_candidate_comparison') }}
    where route_kind = 'gpu' and meets_slo
    qualify row_number() over (partition by workload_id order by rank) = 1
),

best_api as (
    select workload_id, candidate, monthly_cost, effective_unit_cost
    from {{ ref('fct_candidate_comparison') }}
    where route_kind = 'api' and meets_slo
    qualify row_number() over (partition by workload_id order by rank) = 1
),

usage as (
    select workload_id, sum(used_gpu_hours) / nullif(sum(billed_gpu_hours), 0) as measured_utilisation
    from {{ ref('fct_gpu_utilisation_daily') }}
    where workload_id is not null and billed_gpu_hours > 0
    group by all
),

base as (
    select
        best_gpu.*,
        workloads.operating_mode,
        workloads.operating_boundary,
        coalesce(usage.measured_utilisation,
                 best_gpu.accepted_outputs / nullif(best_gpu.accepted_outputs, 0)
                 * (select coalesce(cast({{ json_scalar_text('value') }} as double), 0.6) from {{ ref('stg_registry__policies') }}
                    where policy = 'serving_target_utilisation')) as utilisation,
        case when usage.measured_utilisation is not null then 'measured (usage)' else 'Stage-4 sizing target' end
            as utilisation_basis,
        best_gpu.replicas * best_gpu.gpu_count as gpus_needed,
        best_gpu.rate_per_gpu_hour * best_gpu.replicas * best_gpu.gpu_count * 730 as on_demand_full_month
    from best_gpu
    inner join workloads using (workload_id)
    left join usage using (workload_id)
),

options as (
    select workload_id, 'on-demand' as option, null::double as break_even_utilisation,
           on_demand_full_month * utilisation as monthly_cost, 'pay for the hours used' as basis_note
    from base
    union all
    select base.workload_id, category.key, category.factor,
           on_demand_full_month * category.factor,
           'on-demand x ' || category.key || ' factor ' || cast(category.factor as string) || ', billed every hour'
    from base
    cross join policies
    cross join (
        select category_keys.key,
               cast({{ json_text('factors.pricing_category_factors', 'category_keys.key') }} as double) as factor
        from (values ('spot'), ('reserved-1y'), ('reserved-3y')) as category_keys(key)
        cross join policies as factors
    ) as category
    where category.factor is not null
    union all
    select base.workload_id, 'owned',
           owned_month / nullif(on_demand_full_month, 0),
           owned_month,
           'capex / ' || cast(amortisation as string) || ' months + power + operations'
    from (
        select base.*,
               cast({{ json_text('owned.owned_hardware', "'amortisation_months'") }} as double) as amortisation,
               gpus_needed * (
                   cast({{ json_text(json_member('owned.owned_hardware', "'capex_per_gpu'"), 'base.gpu_model') }} as double)
                       / cast({{ json_text('owned.owned_hardware', "'amortisation_months'") }} as double)
                   + gpus.tdp_w / 1000.0 * 730 * cast({{ json_text('owned.owned_hardware', "'pue'") }} as double)
                       * cast({{ json_text('owned.owned_hardware', "'electricity_per_kwh'") }} as double)
                   + cast({{ json_text('owned.owned_hardware', "'ops_per_gpu_month'") }} as double)
               ) as owned_month
        from base
        cross join owned
        left join gpus on gpus.gpu_model = base.gpu_model
    ) as base
    where owned_month is not null
    union all
    select base.workload_id, 'api route', null, best_api.monthly_cost, best_api.candidate
    from base
    inner join best_api using (workload_id)
),

final as (
    select
        options.workload_id,
        options.option,
        base.gpu_model,
        base.gpus_needed,
        'USD' as currency,
        {{ money('options.monthly_cost') }} as monthly_cost,
        round(options.break_even_utilisation, 4) as break_even_utilisation,
        round(base.utilisation, 4) as measured_utilisation,
        base.utilisation_basis,
        case
            when options.break_even_utilisation is null then null
            else base.utilisation >= options.break_even_utilisation
        end as beats_on_demand,
        options.basis_note,
        case
            when base.operating_boundary = 'managed API' then 'managed model/API route'
            when base.operating_boundary in ('dedicated cluster', 'on-prem', 'private network')
                then 'dedicated training cluster or private GPU cloud'
            when base.operating_mode in ('experiment', 'developer notebook') then 'model API or short-term rental'
            when base.operating_mode in ('seasonal burst', 'scheduled batch') then 'spot/marketplace GPUs or batch model API'
            when base.operating_mode = 'always-on' and base.utilisation >= 0.5
                then 'reserved GPUs, dedicated endpoint or reserved cluster'
            else 'model API or short-term rental'
        end as guide_label
    from options
    inner join base using (workload_id)
)

select * from final
