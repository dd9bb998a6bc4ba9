-- Provider cost-report lines (OpenAI costs, Anthropic cost_report) per time bucket. Reports fetched
-- again over an overlapping window repeat lines: one row per bucket and line identity, latest load.
with source as (
    select * from {{ source('api_spend', 'api_cost_buckets') }}
),

deduplicated as (
    select *
    from source
    qualify row_number() over (
        partition by provider, bucket_start, bucket_end, line_item, cost_type, token_type, model,
                     project_id, workspace_id, api_key_id, currency
        order by _loaded_at desc, _source_line desc
    ) = 1
),

final as (
    select
        md5(concat_ws('|', provider, {{ ts_text('bucket_start') }}, {{ ts_text('bucket_end') }}, line_item, cost_type, token_type, model,
                      project_id, workspace_id, api_key_id, currency)) as cost_line_key,
        lower(provider) as provider,
        bucket_start,
        bucket_end,
        {{ money('amount') }} as amount,
        {{ money('list_amount') }} as list_amount,
        upper(currency) as currency,
        line_item,
        cost_type,
        token_type,
        model,
        project_id,
        workspace_id,
        api_key_id,
        requests,
        _file_hash as x_file_hash,
        _source_file as x_source_file
    from deduplicated
)

select * from final
