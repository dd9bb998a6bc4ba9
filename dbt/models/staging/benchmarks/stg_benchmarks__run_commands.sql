-- vLLM `.commands.json` sidecars, one row per result file stem. The stem is taken from the original
-- file name (the landed copy is named by its hash); `<stem>.commands.json` belongs to `<stem>.json`.
with source as (
    select * from {{ source('benchmarks', 'benchmark_run_commands') }}
),

renamed as (
    select
        regexp_replace(_source_file, '\.commands\.json$', '') as result_file_stem,
        client_command,
        gpu_type,
        vm_sku,
        vm_count,
        gpu_model as gpu_model_as_written,
        {{ canonical_gpu_model('gpu_model') }} as gpu_model,
        gpu_count,
        tensor_parallel,
        pipeline_parallel,
        request_rate_label,
        model_id,
        network,
        _loaded_at,
        _file_hash as x_file_hash,
        _source_file as x_source_file
    from source
),

latest as (
    select *
    from renamed
    qualify row_number() over (partition by result_file_stem order by _loaded_at desc, x_file_hash) = 1
),

final as (
    select {{ star_except(['_loaded_at']) }}
    from latest
)

select * from final
