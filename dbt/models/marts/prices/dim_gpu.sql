-- One row per GPU model: the gpu_catalog figures with the datasheet they come from, plus the
-- cheapest current on-demand USD price per GPU-hour over whole-GPU offers and who offers it.
-- USD only: there is no dated FX table yet, so prices in other currencies are not compared.
with catalog as (
    select * from {{ ref('gpu_catalog') }}
),

usd_on_demand as (
    select
        *,
        row_number() over (
            partition by gpu_model
            order by price_per_gpu_hour, provider, sku, region
        ) as cheapness
    from {{ ref('fct_gpu_offers_current') }}
    where pricing_category = 'on-demand'
        and currency = 'USD'
        and is_listed
        and not is_partial_gpu
        and price_per_gpu_hour is not null
),

offer_counts as (
    select
        gpu_model,
        count(*) as current_usd_on_demand_offers,
        count(distinct provider) as current_usd_on_demand_providers
    from usd_on_demand
    group by gpu_model
),

cheapest as (
    select * from usd_on_demand where cheapness = 1
),

final as (
    select
        catalog.gpu_model,
        catalog.gpu_class,
        catalog.architecture,
        catalog.memory_gb,
        catalog.memory_bandwidth_gbs,
        catalog.bf16_dense_tflops,
        catalog.fp8_dense_tflops,
        catalog.tdp_w,
        catalog.interconnect,
        catalog.source as spec_source,
        cheapest.price_per_gpu_hour as cheapest_on_demand_usd_per_gpu_hour,
        cheapest.provider as cheapest_on_demand_provider,
        cheapest.sku as cheapest_on_demand_sku,
        cheapest.region as cheapest_on_demand_region,
        cheapest.valid_from as cheapest_on_demand_valid_from,
        cheapest.last_observed_at as cheapest_on_demand_last_observed_at,
        cheapest.last_source as cheapest_on_demand_price_source,
        coalesce(offer_counts.current_usd_on_demand_offers, 0) as current_usd_on_demand_offers,
        coalesce(offer_counts.current_usd_on_demand_providers, 0) as current_usd_on_demand_providers
    from catalog
    left join cheapest on catalog.gpu_model = cheapest.gpu_model
    left join offer_counts on catalog.gpu_model = offer_counts.gpu_model
)

select * from final
