-- Operations tests (own CSV format), one row per test_id; a key delivered again in a later file keeps its latest load.
with source as (
    select * from {{ source('benchmarks', 'ops_tests') }}
),

deduplicated as (
    select *
    from source
    qualify row_number() over (partition by test_id order by _loaded_at desc, _source_line desc) = 1
),

final as (
    select
        test_id,
        workload_id,
        gpu_model as gpu_model_as_written,
        {{ canonical_gpu_model('gpu_model') }} as gpu_model,
        kind,
        seconds,
        succeeded,
        notes,
        _file_hash as x_file_hash,
        _source_file as x_source_file,
        _source_line as x_source_line
    from deduplicated
)

select * from final
