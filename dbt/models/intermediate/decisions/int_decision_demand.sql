-- Demand and today's cost per registry workload, from production: the latest production month
-- of fct_workload_unit_cost in USD (accepted outputs, all-in cost, unit cost and the pieces the
-- candidates reuse). A registry assumption `expected_monthly_outputs` overrides the demand (the
-- row says so). Workloads with no production month keep a row with null demand and the reason.
with workloads as (
    select workload_id, workload_type, assumptions from {{ ref('stg_registry__workloads') }}
),

production as (
    select *
    from {{ ref('fct_workload_unit_cost') }}
    where basis = 'production' and currency = 'USD'
    qualify row_number() over (partition by workload_id order by period desc) = 1
),

final as (
    select
        workloads.workload_id,
        workloads.workload_type,
        production.period as today_period,
        production.all_in_cost as today_monthly_cost,
        production.effective_unit_cost as today_unit_cost,
        production.accepted_outputs as today_accepted_outputs,
        production.platform_labor as today_platform_labor,
        coalesce(cast({{ json_text('workloads.assumptions', "'expected_monthly_outputs'") }} as double),
                 cast(production.accepted_outputs as double)) as monthly_accepted_demand,
        case
            when {{ json_text('workloads.assumptions', "'expected_monthly_outputs'") }} is not null
                then 'registry expected_monthly_outputs'
            when production.workload_id is not null
                then 'production ' || cast(production.period as string) || ': ' || production.output_basis
        end as demand_basis,
        case when production.workload_id is null then 'no production month in fct_workload_unit_cost' end
            as demand_missing_reason
    from workloads
    left join production using (workload_id)
)

select * from final
