-- Quality-filter outcomes (own CSV format), one row per workload and day; a key delivered again in a later file keeps its latest load.
with source as (
    select * from {{ source('benchmarks', 'quality_outcomes') }}
),

deduplicated as (
    select *
    from source
    qualify row_number() over (partition by workload_id, day order by _loaded_at desc, _source_line desc) = 1
),

final as (
    select
        workload_id,
        day,
        produced,
        accepted,
        rejected_quality,
        rejected_safety,
        filter_name,
        _file_hash as x_file_hash,
        _source_file as x_source_file,
        _source_line as x_source_line
    from deduplicated
)

select * from final
