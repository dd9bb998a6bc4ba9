-- One row per training / fine-tuning run (own format); failed runs kept (failed_run_waste).
with source as (
    select * from {{ ref('stg_benchmarks__training_runs') }}
),

final as (
    select
        source.run_id,
        source.workload_id,
        source.run_kind,
        coalesce(aliases.gpu_model, source.gpu_model) as gpu_model,
        source.gpu_model_as_written,
        source.gpu_count,
        source.provider,
        coalesce(source.pricing_category, 'on-demand') as pricing_category,
        source.started_at,
        source.ended_at,
        source.wall_hours,
        source.wall_hours * source.gpu_count as gpu_hours,
        source.time_to_target_hours,
        source.target_eval_score,
        source.eval_score_reached,
        source.reached_target,
        source.checkpoints_written,
        source.checkpoint_minutes_total,
        source.restarts,
        source.outcome
    from source
    {{ join_gpu_alias('source.gpu_model_as_written') }}
)

select * from final
