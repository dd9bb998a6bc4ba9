-- Effective cost per accepted output, per workload, month, currency and basis (production
-- records, or a benchmark run), with every component of the all-in cost and the naive
-- "hourly-rate" unit cost beside it: all GPU cost attributable to the workload before any carve-out
-- (compute, checkpoints, idle, failed work, queue, retries) plus API spend, divided by produced
-- outputs: the number a buyer gets by multiplying an hourly rate by hours.
{% set components = ['gpu_compute', 'api_usage', 'storage', 'network', 'checkpointing', 'serving_stack',
                     'observability', 'platform_labor', 'idle_capacity', 'retry_waste', 'failure_waste',
                     'queue_overhead', 'moderation_or_quality_filtering', 'operator_review'] %}
with lines as (
    select * from {{ ref('int_workload_cost_lines') }}
),

outputs as (
    select * from {{ ref('int_workload_outputs') }}
),

workloads as (
    select * from {{ ref('stg_registry__workloads') }}
),

costs as (
    select
        basis, workload_id, period, currency,
        {% for c in components -%}
        {{ money("sum(case when component = '" ~ c ~ "' then amount else 0 end)") }} as {{ c }},
        {% endfor -%}
        {{ money('sum(amount)') }} as all_in_cost,
        count(*) as cost_lines
    from lines
    group by all
),

keyed as (
    select basis, workload_id, period, currency from costs
    union
    -- Outputs with no cost source still show, with a null unit cost and the reason.
    select outputs.basis, outputs.workload_id, outputs.period, 'USD'
    from outputs
    where not exists (
        select 1 from costs
        where costs.basis = outputs.basis and costs.workload_id = outputs.workload_id and costs.period = outputs.period
    )
),

final as (
    select
        keyed.workload_id,
        workloads.team_id,
        workloads.workload_type,
        keyed.period,
        keyed.currency,
        keyed.basis,
        {% for c in components -%}
        coalesce(costs.{{ c }}, 0) as {{ c }},
        {% endfor -%}
        coalesce(costs.all_in_cost, 0) as all_in_cost,
        coalesce(costs.cost_lines, 0) as cost_lines,
        outputs.produced_outputs,
        outputs.accepted_outputs,
        outputs.accepted_seconds,
        workloads.unit_of_success,
        outputs.output_basis,
        case when costs.all_in_cost is null then null
             else {{ safe_unit_cost('costs.all_in_cost', 'outputs.accepted_outputs') }} end as effective_unit_cost,
        case when workloads.workload_type = 'video generation' and costs.all_in_cost is not null
             then {{ safe_unit_cost('costs.all_in_cost', 'outputs.accepted_seconds') }} end as cost_per_accepted_second,
        {{ safe_unit_cost('coalesce(costs.gpu_compute, 0) + coalesce(costs.checkpointing, 0) + coalesce(costs.idle_capacity, 0)
                           + coalesce(costs.failure_waste, 0) + coalesce(costs.queue_overhead, 0)
                           + coalesce(costs.retry_waste, 0) + coalesce(costs.api_usage, 0)', 'outputs.produced_outputs') }}
            as naive_unit_cost,
        case
            when costs.all_in_cost is null then 'no cost source for this period'
            when outputs.workload_id is null then 'no output records for this period'
            when coalesce(outputs.accepted_outputs, 0) = 0 then 'no accepted outputs: unit cost undefined'
            when keyed.basis = 'benchmark' then 'benchmark run: GPU time and failed requests only (no idle, storage or labour)'
            -- Production online inference should count only responses within the latency SLO; the ledger
            -- has no per-request serving latency for production yet, so it says so.
            when workloads.workload_type = 'real-time inference'
                then 'accepted = quality-filter accepted; latency SLO not applied (no production serving latency evidence)'
        end as unit_cost_note
    from keyed
    left join costs
        on costs.basis = keyed.basis and costs.workload_id = keyed.workload_id
        and costs.period = keyed.period and costs.currency = keyed.currency
    left join outputs
        on outputs.basis = keyed.basis and outputs.workload_id = keyed.workload_id and outputs.period = keyed.period
    left join workloads on workloads.workload_id = keyed.workload_id
)

select * from final
