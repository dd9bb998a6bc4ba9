-- LiteLLM proxy request log, one row per request_id (a log exported twice keeps its latest load).
-- Failed requests are kept: what the provider billed for them is retry waste.
with source as (
    select * from {{ source('api_spend', 'api_requests') }}
),

deduplicated as (
    select *
    from source
    qualify row_number() over (partition by request_id order by _loaded_at desc, _source_line desc) = 1
),

final as (
    select
        request_id,
        started_at,
        ended_at,
        lower(provider) as provider,
        model,
        model_group,
        api_key_hash,
        team_id as team_tag,
        user_id,
        end_user,
        session_id,
        workload_id as workload_tag,
        call_type,
        lower(status) as status,
        coalesce(prompt_tokens, 0) as prompt_tokens,
        coalesce(completion_tokens, 0) as completion_tokens,
        coalesce(cached_tokens, 0) as cached_tokens,
        total_tokens,
        {{ money('coalesce(spend, 0)') }} as spend,
        upper(coalesce(currency, 'USD')) as currency,
        coalesce(retries, 0) as retries,
        coalesce(fallback, false) as fallback,
        coalesce(cache_hit, false) as cache_hit,
        request_duration_ms,
        _file_hash as x_file_hash,
        _source_file as x_source_file,
        _source_line as x_source_line
    from deduplicated
)

select * from final
