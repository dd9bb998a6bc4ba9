-- Rentable instance shapes: the cheapest current, listed, USD on-demand offer per GPU model and
-- GPUs per instance (fct_gpu_offers_current; whole GPUs only). A candidate rents whole instances:
-- price per instance-hour = price_per_gpu_hour x gpus_per_instance. Offers priced per GPU-hour
-- (marketplaces) are taken as single-GPU instances. Intra-node interconnect comes from the GPU
-- catalog (a single-GPU instance has none: it cannot hold a tensor-parallel group); the inter-node
-- network from the small instance catalog below (provider pages, with provenance). Only EFA or
-- InfiniBand allows a model to span instances; everything else is "none".
with network_catalog as (
    select * from (values
        ('aws', 'p4d.', 'EFA 400 Gb/s', 'AWS EC2 P4 instance page (p4d.24xlarge: 4x 100 Gb/s EFA)'),
        ('aws', 'p4de.', 'EFA 400 Gb/s', 'AWS EC2 P4 instance page (p4de.24xlarge: 4x 100 Gb/s EFA)'),
        ('aws', 'p5.', 'EFA 3200 Gb/s', 'AWS EC2 P5 instance page (p5.48xlarge: 3200 Gb/s EFAv2)'),
        ('aws', 'p5e.', 'EFA 3200 Gb/s', 'AWS EC2 P5 instance page (p5e.48xlarge: 3200 Gb/s EFA)'),
        ('aws', 'p5en.', 'EFA 3200 Gb/s', 'AWS EC2 P5 instance page (p5en.48xlarge: 3200 Gb/s EFAv3)'),
        ('aws', 'p6-b200.', 'EFA 3200 Gb/s', 'AWS EC2 P6 instance page (p6-b200.48xlarge: 8x 400 Gb/s EFAv4)'),
        ('aws', 'p6-b300.', 'EFA 6400 Gb/s', 'AWS EC2 P6 instance page (p6-b300.48xlarge: 6400 Gb/s EFAv4)'),
        ('azure', 'Standard_ND96asr_v4', 'InfiniBand HDR 1600 Gb/s', 'Azure ND A100 v4 series page (8x 200 Gb/s HDR)'),
        ('azure', 'Standard_ND96amsr_A100_v4', 'InfiniBand HDR 1600 Gb/s', 'Azure NDm A100 v4 series page (8x 200 Gb/s HDR)'),
        ('azure', 'Standard_ND96isr_H100_v5', 'InfiniBand NDR 3200 Gb/s', 'Azure ND H100 v5 series page (8x 400 Gb/s NDR)'),
        ('azure', 'Standard_ND128isr_NDR_GB200_v6', 'InfiniBand NDR 1600 Gb/s', 'Azure ND GB200 v6 series page (4x 400 Gb/s NDR)')
    ) as catalog(provider, sku_prefix, inter_node_network, network_source)
),

offers as (
    -- Every listed offer competes: one priced in another currency converts to USD at the rate of the
    -- day it was observed (fct_fx_rates_daily, reporting currency USD); one without a rate there stays
    -- out and the warning check assert_every_gpu_offer_converted lists it.
    select
        offers.provider, offers.sku, offers.region, offers.gpu_model,
        cast(case when offers.price_unit = 'gpu-hour' then 1 else offers.gpu_count end as integer) as gpus_per_instance,
        case when offers.currency = 'USD' then offers.price_per_gpu_hour
             else {{ money('offers.price_per_gpu_hour * fx.rate_to_reporting') }} end as price_per_gpu_hour,
        offers.currency as price_currency,
        offers.price_per_gpu_hour as native_price_per_gpu_hour,
        case when offers.currency = 'USD' then cast(null as decimal(38, 12)) else fx.rate_to_reporting end as fx_rate,
        case when offers.currency = 'USD' then cast(null as date) else fx.rate_date end as fx_rate_date,
        offers.last_source as price_source,
        offers.last_observed_at as price_observed_at
    from {{ ref('fct_gpu_offers_current') }} as offers
    left join {{ ref('fct_fx_rates_daily') }} as fx
        on fx.currency = offers.currency and fx.day = cast(offers.last_observed_at as date)
        and fx.reporting_currency = 'USD'
    where offers.pricing_category = 'on-demand' and offers.is_listed
        and (offers.currency = 'USD' or fx.rate_to_reporting is not null)
        and not coalesce(offers.is_partial_gpu, false)
        and offers.gpu_count >= 1 and offers.gpu_count = floor(offers.gpu_count)
        and offers.price_per_gpu_hour > 0 and offers.gpu_model is not null
),

cheapest as (
    select *
    from offers
    qualify row_number() over (
        partition by gpu_model, gpus_per_instance order by price_per_gpu_hour, provider, sku, region
    ) = 1
),

spot as (
    -- An observed spot price of the same instance, where there is one.
    select provider, sku, region, min(price_per_gpu_hour) as spot_price_per_gpu_hour
    from {{ ref('fct_gpu_offers_current') }}
    where pricing_category = 'spot' and currency = 'USD' and is_listed and price_per_gpu_hour > 0
    group by provider, sku, region
),

final as (
    select
        cheapest.provider,
        cheapest.sku as instance_type,
        cheapest.region,
        cheapest.gpu_model,
        cheapest.gpus_per_instance,
        gpus.memory_gb as gpu_memory_gb,
        gpus.memory_bandwidth_gbs,
        gpus.tdp_w,
        cheapest.price_per_gpu_hour,
        cheapest.price_per_gpu_hour * cheapest.gpus_per_instance as price_per_instance_hour,
        spot.spot_price_per_gpu_hour * cheapest.gpus_per_instance as spot_price_per_instance_hour,
        case when cheapest.gpus_per_instance = 1 then 'none (single GPU)'
             else coalesce(gpus.interconnect, 'unknown') end as intra_node_interconnect,
        coalesce(network.inter_node_network, 'none') as inter_node_network,
        coalesce(network.network_source, 'not in the instance catalog: no multi-node fabric assumed') as network_source,
        network.inter_node_network is not null as multi_node_allowed,
        cheapest.price_source,
        cheapest.price_observed_at,
        cheapest.price_currency,
        cheapest.native_price_per_gpu_hour,
        cheapest.fx_rate,
        cheapest.fx_rate_date
    from cheapest
    inner join {{ ref('dim_gpu') }} as gpus on gpus.gpu_model = cheapest.gpu_model
    left join network_catalog as network
        on network.provider = cheapest.provider
        and left(cheapest.sku, length(network.sku_prefix)) = network.sku_prefix
    left join spot
        on spot.provider = cheapest.provider and spot.sku = cheapest.sku
        and spot.region is not distinct from cheapest.region
)

select * from final
