-- Provider usage-report rows (tokens, requests) per time bucket; one row per bucket and dimension
-- set, latest load (overlapping fetch windows repeat rows).
with source as (
    select * from {{ source('api_spend', 'api_usage_buckets') }}
),

deduplicated as (
    select *
    from source
    qualify row_number() over (
        partition by provider, bucket_start, bucket_end, model, project_id, api_key_id, user_id, batch, service_tier
        order by _loaded_at desc, _source_line desc
    ) = 1
),

final as (
    select
        lower(provider) as provider,
        bucket_start,
        bucket_end,
        model,
        project_id,
        api_key_id,
        user_id,
        batch,
        service_tier,
        input_tokens,
        input_cached_tokens,
        input_cache_write_tokens,
        output_tokens,
        num_requests,
        _file_hash as x_file_hash,
        _source_file as x_source_file
    from deduplicated
)

select * from final
