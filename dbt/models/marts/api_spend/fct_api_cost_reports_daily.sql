-- Provider cost reports (OpenAI costs, Anthropic cost_report) per UTC day, provider and currency,
-- for the reconciliation with the proxy log. Buckets are assigned to the day they start.
with buckets as (
    select * from {{ ref('stg_api_spend__cost_buckets') }}
),

final as (
    select
        cast(bucket_start as date) as day,
        provider,
        currency,
        {{ money('sum(amount)') }} as cost,
        {{ money('sum(list_amount)') }} as list_cost,
        count(*) as cost_lines
    from buckets
    group by all
)

select * from final
