-- One row per evaluation-suite run (own format); unit of success = one completed suite.
with source as (
    select * from {{ ref('stg_benchmarks__eval_runs') }}
),

final as (
    select
        source.run_id,
        source.workload_id,
        source.suite,
        source.model_id,
        coalesce(aliases.gpu_model, source.gpu_model) as gpu_model,
        source.gpu_model_as_written,
        source.gpu_count,
        source.provider,
        coalesce(source.pricing_category, 'on-demand') as pricing_category,
        source.started_at,
        source.ended_at,
        source.wall_hours,
        source.wall_hours * source.gpu_count as gpu_hours,
        source.tasks_total,
        source.tasks_completed,
        source.tasks_failed,
        source.retries,
        source.outcome,
        source.outcome = 'completed' and source.tasks_completed = source.tasks_total as suite_completed
    from source
    {{ join_gpu_alias('source.gpu_model_as_written') }}
)

select * from final
