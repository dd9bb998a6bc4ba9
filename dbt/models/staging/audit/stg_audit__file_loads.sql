-- One row per landed file; `delivery_run_id` groups files that arrived together (parts of one export).
with source as (
    select * from {{ source('audit', 'file_loads') }}
),

final as (
    select
        file_hash,
        family,
        format,
        source_file,
        origin,
        observed_at,
        rows_loaded,
        rejects,
        status,
        message,
        run_id as delivery_run_id,
        loaded_at
    from source
)

select * from final
