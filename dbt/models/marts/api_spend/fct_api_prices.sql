-- LiteLLM catalog prices per model key and catalog version, USD per 1M tokens, valid from the
-- version's observation time until the next version (semantic version order) that lists the same
-- model key (open = null).
with prices as (
    select * from {{ ref('stg_api_spend__model_prices') }}
),

final as (
    select
        model_key,
        provider,
        catalog_version,
        observed_at,
        mode,
        cast(input_cost_per_token * 1000000 as decimal(38, 12)) as input_cost_per_1m_tokens,
        cast(output_cost_per_token * 1000000 as decimal(38, 12)) as output_cost_per_1m_tokens,
        cast(cache_read_input_token_cost * 1000000 as decimal(38, 12)) as cache_read_cost_per_1m_tokens,
        cast(input_cost_per_token_batches * 1000000 as decimal(38, 12)) as batch_input_cost_per_1m_tokens,
        cast(output_cost_per_token_batches * 1000000 as decimal(38, 12)) as batch_output_cost_per_1m_tokens,
        'USD' as currency,
        observed_at as valid_from,
        lead(observed_at) over (
            partition by model_key
            order by {{ version_sort_key('catalog_version') }}, observed_at
        ) as valid_to,
        max_input_tokens,
        max_output_tokens
    from prices
)

select * from final
