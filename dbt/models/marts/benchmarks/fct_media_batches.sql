-- One row per image / video generation batch (own format) with produced and accepted assets.
with source as (
    select * from {{ ref('stg_benchmarks__media_batches') }}
),

final as (
    select
        source.batch_id,
        source.workload_id,
        source.media_kind,
        coalesce(aliases.gpu_model, source.gpu_model) as gpu_model,
        source.gpu_model_as_written,
        source.gpu_count,
        source.started_at,
        source.ended_at,
        source.gpu_hours,
        source.produced,
        source.accepted,
        case when source.produced > 0 then source.accepted / source.produced end as accepted_ratio,
        source.failed_renders,
        source.seconds_of_video,
        source.queue_minutes,
        source.operator_review_minutes,
        source.moderation_rejected
    from source
    {{ join_gpu_alias('source.gpu_model_as_written') }}
)

select * from final
