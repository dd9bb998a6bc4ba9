-- The current price of every GPU offer: the open interval (valid_to is null) of each
-- (provider, sku, region, pricing_category, currency), ranked per GPU model, pricing category and
-- currency by price per GPU-hour for the dashboard's "cheapest current offer per GPU model".
-- Two kinds of offer are not ranked:
-- * delisted: sources that are full price-list snapshots (var price_snapshot_formats: the Karpenter
--   histories) list every SKU at every snapshot, so a SKU missing from the latest snapshot of its
--   provider, region and currency is no longer sold even though its last price was never replaced;
-- * partial GPUs (vGPU slices, gpu_count < 1) are ranked apart: a slice's memory and throughput are
--   not the GPU's, so its per-GPU-hour price is not a like-for-like offer.
{% set snapshot_formats = var('price_snapshot_formats', ['karpenter_aws_pricing_history', 'karpenter_azure_pricing_history']) %}
with history as (
    select * from {{ ref('fct_gpu_price_history') }}
    where is_current
),

latest_snapshots as (
    select provider, source_format, region, currency, max(observed_at) as latest_snapshot_at
    from {{ ref('int_gpu_prices_observed') }}
    where source_format in ('{{ snapshot_formats | join("', '") }}')
    group by provider, source_format, region, currency
),

current_offers as (
    select
        history.price_interval_id,
        history.provider,
        history.sku,
        history.region,
        history.pricing_category,
        history.currency,
        history.gpu_model,
        history.gpu_count,
        coalesce(history.gpu_count < 1, false) as is_partial_gpu,
        history.price_unit,
        history.price_per_hour,
        history.price_per_gpu_hour,
        history.valid_from,
        history.observations,
        history.last_observed_at,
        history.last_observed_at_basis,
        history.source,
        history.last_source,
        history.last_source_format,
        latest_snapshots.latest_snapshot_at,
        coalesce(history.last_observed_at >= latest_snapshots.latest_snapshot_at, true) as is_listed
    from history
    left join latest_snapshots
        on history.provider = latest_snapshots.provider
        and history.last_source_format = latest_snapshots.source_format
        and history.region is not distinct from latest_snapshots.region
        and history.currency = latest_snapshots.currency
),

final as (
    select
        *,
        case
            when is_listed and price_per_gpu_hour is not null then
                rank() over (
                    partition by gpu_model, pricing_category, currency, is_partial_gpu,
                        is_listed and price_per_gpu_hour is not null
                    order by price_per_gpu_hour
                )
        end as price_rank
    from current_offers
)

select * from final
