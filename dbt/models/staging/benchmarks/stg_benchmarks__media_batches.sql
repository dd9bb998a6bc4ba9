-- Image / video generation batches (own CSV format), one row per batch_id; a key delivered again in a later file keeps its latest load.
with source as (
    select * from {{ source('benchmarks', 'media_batches') }}
),

deduplicated as (
    select *
    from source
    qualify row_number() over (partition by batch_id order by _loaded_at desc, _source_line desc) = 1
),

final as (
    select
        batch_id,
        workload_id,
        media_kind,
        gpu_model as gpu_model_as_written,
        {{ canonical_gpu_model('gpu_model') }} as gpu_model,
        gpu_count,
        started_at,
        ended_at,
        gpu_hours,
        produced,
        accepted,
        failed_renders,
        seconds_of_video,
        queue_minutes,
        operator_review_minutes,
        moderation_rejected,
        _file_hash as x_file_hash,
        _source_file as x_source_file,
        _source_line as x_source_line
    from deduplicated
)

select * from final
