-- Evaluation-suite runs (own CSV format), one row per run_id; a key delivered again in a later file keeps its latest load.
with source as (
    select * from {{ source('benchmarks', 'eval_runs') }}
),

deduplicated as (
    select *
    from source
    qualify row_number() over (partition by run_id order by _loaded_at desc, _source_line desc) = 1
),

final as (
    select
        run_id,
        workload_id,
        suite,
        model_id,
        gpu_model as gpu_model_as_written,
        {{ canonical_gpu_model('gpu_model') }} as gpu_model,
        gpu_count,
        lower(provider) as provider,
        lower(pricing_category) as pricing_category,
        started_at,
        ended_at,
        wall_hours,
        tasks_total,
        tasks_completed,
        tasks_failed,
        retries,
        outcome,
        _file_hash as x_file_hash,
        _source_file as x_source_file,
        _source_line as x_source_line
    from deduplicated
)

select * from final
