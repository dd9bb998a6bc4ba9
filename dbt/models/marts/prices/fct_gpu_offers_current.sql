-- The current price of every GPU offer: the open interval (valid_to is null) of each
-- (provider, sku, region, pricing_category, currency), ranked per GPU model, pricing category and
-- currency by price per GPU-hour for the dashboard's "cheapest current offer per GPU model".
-- Partial-GPU offers (vGPU slices, gpu_count < 1) are ranked apart: a slice's memory and
-- throughput are not the GPU's, so its per-GPU-hour price is not a like-for-like offer.
with history as (
    select * from {{ ref('fct_gpu_price_history') }}
),

current_offers as (
    select
        price_interval_id,
        provider,
        sku,
        region,
        pricing_category,
        currency,
        gpu_model,
        gpu_count,
        coalesce(gpu_count < 1, false) as is_partial_gpu,
        price_unit,
        price_per_hour,
        price_per_gpu_hour,
        valid_from,
        observations,
        last_observed_at,
        source,
        last_source
    from history
    where is_current
),

final as (
    select
        *,
        case
            when price_per_gpu_hour is not null then
                rank() over (
                    partition by gpu_model, pricing_category, currency, is_partial_gpu, price_per_gpu_hour is null
                    order by price_per_gpu_hour
                )
        end as price_rank
    from current_offers
)

select * from final
