-- LLM API spend per UTC day, team, workload, provider, model and currency from the proxy log.
-- failed_cost is what failed requests were billed (retry waste): it stays in the cost, and the
-- failed requests come off the accepted outputs.
with requests as (
    select * from {{ ref('int_api_requests_allocated') }}
),

final as (
    select
        cast(started_at as date) as day,
        team_id,
        workload_id,
        provider,
        model,
        currency,
        count(*) as requests,
        count(*) filter (where failed) as failed,
        count(*) filter (where retried) as retried,
        sum(retries) as retry_attempts,
        sum(prompt_tokens) as input_tokens,
        sum(cached_tokens) as cached_tokens,
        sum(completion_tokens) as output_tokens,
        {{ money('sum(spend)') }} as cost,
        {{ money('coalesce(sum(spend) filter (where failed), 0)') }} as failed_cost
    from requests
    group by all
)

select * from final
