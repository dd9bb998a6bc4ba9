-- Hourly prices of GPU-looking SKUs whose GPU is unknown (not in instance_gpu_map, or named by the
-- source but missing from gpu_catalog): kept and reported so the seed can be extended, never
-- silently dropped from the price comparison.
with observed as (
    select * from {{ ref('int_gpu_prices_observed') }}
),

final as (
    select
        observation_id,
        provider,
        sku,
        sku_description,
        gpu_model as named_gpu_model,
        gpu_count,
        region,
        pricing_category,
        currency,
        price,
        price_unit,
        observed_at,
        source,
        source_format,
        file_hash,
        case
            when gpu_model is not null then 'gpu_model not in gpu_catalog'
            else 'sku not in instance_gpu_map'
        end as unmapped_reason
    from observed
    where not is_mapped
)

select * from final
