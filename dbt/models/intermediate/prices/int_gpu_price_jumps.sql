-- Price changes between consecutive validity intervals of one key that exceed a factor
-- (dbt var price_jump_factor, default 3) up or down: a parser or mapping error as often as a real
-- repricing, so they are flagged for review (warn test), not dropped. Reads the published
-- history so a jump is exactly a change a reader of fct_gpu_price_history would see.
with history as (
    select * from {{ ref('fct_gpu_price_history') }}
    where price_change_ratio is not null
),

final as (
    select
        price_interval_id,
        provider,
        sku,
        region,
        pricing_category,
        currency,
        gpu_model,
        previous_price_per_hour,
        price_per_hour,
        price_change_ratio,
        valid_from as changed_at,
        source,
        {{ var('price_jump_factor', 3) }} as jump_factor
    from history
    where price_change_ratio > {{ var('price_jump_factor', 3) }}
        or price_change_ratio < 1.0 / {{ var('price_jump_factor', 3) }}
)

select * from final
