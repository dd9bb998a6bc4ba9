-- Hourly GPU prices, one row per observation, put per GPU-hour. The GPU comes from the source when
-- it names one (GCP/OCI descriptions, gpuhunt, HTML pages), else from the exact (provider, sku)
-- entry of seed instance_gpu_map; the GPU count likewise (source first: it states vGPU slices).
-- Rows whose GPU is not in gpu_catalog stay here with is_mapped = false when the SKU looks like a
-- GPU offer, so the unmapped ones are reported (int_gpu_prices_unmapped) instead of vanishing.
-- Hourly prices of non-GPU SKUs (CPU droplets, Trainium/Inferentia/Gaudi/FPGA families) are not
-- GPU prices and are left out.
with observations as (
    select * from {{ ref('stg_prices__observations') }}
    where price_unit in ('hour', 'gpu-hour')
),

gpu_map as (
    select provider, sku, gpu_model, gpu_count from {{ ref('instance_gpu_map') }}
),

catalog as (
    select gpu_model from {{ ref('gpu_catalog') }}
),

resolved as (
    select
        observations.*,
        coalesce(observations.gpu_model, gpu_map.gpu_model) as named_gpu_model,
        case
            when observations.gpu_model is not null then 'source'
            when gpu_map.gpu_model is not null then 'instance_gpu_map'
        end as gpu_model_origin,
        case
            when observations.gpu_count > 0 then observations.gpu_count
            when gpu_map.gpu_count > 0 then gpu_map.gpu_count
            -- a per-GPU price covers one GPU by definition
            when observations.price_unit = 'gpu-hour' then cast(1 as decimal(18, 6))
        end as resolved_gpu_count
    from observations
    left join gpu_map
        on observations.provider = gpu_map.provider
        and observations.sku = gpu_map.sku
),

classified as (
    select
        resolved.*,
        catalog.gpu_model as catalog_gpu_model,
        -- GPU-looking: what a reviewer would expect in instance_gpu_map. Instance-family rules for
        -- AWS (p*, g*, gr*) and Azure (Standard_NC/ND/NV/NG), GPU words for everyone else.
        (
            resolved.price_unit = 'gpu-hour'
            or coalesce(resolved.gpu_count, 0) > 0
            or resolved.named_gpu_model is not null
            or (resolved.provider = 'aws' and {{ regex_search('lower(resolved.sku)', "'^(p|g|gr)[0-9]+[a-z0-9-]*\\.'") }})
            or (resolved.provider = 'azure' and {{ regex_search('lower(resolved.sku)', "'^standard_n[cdvg]'") }})
            or {{ regex_search("lower(resolved.sku || ' ' || coalesce(resolved.sku_description, ''))",
                              "'gpu|nvidia|tesla|radeon|instinct|a100|h100|h200|b200|gb200|l40|mi300|rtx|a6000|v100|p100|k80'") }}
        ) as looks_like_gpu
    from resolved
    left join catalog on resolved.named_gpu_model = catalog.gpu_model
),

final as (
    select
        observation_id,
        provider,
        sku,
        sku_description,
        coalesce(catalog_gpu_model, named_gpu_model) as gpu_model,
        gpu_model_origin,
        resolved_gpu_count as gpu_count,
        region,
        pricing_category,
        currency,
        price,
        price_unit,
        {{ money("case when price_unit = 'gpu-hour' then price * resolved_gpu_count else price end") }}
            as price_per_hour,
        case
            when price_unit = 'gpu-hour' then price
            else {{ safe_unit_cost('price', 'resolved_gpu_count') }}
        end as price_per_gpu_hour,
        observed_at,
        observed_at_basis,
        source,
        source_format,
        term_details,
        file_hash,
        source_file,
        source_line,
        catalog_gpu_model is not null as is_mapped
    from classified
    where catalog_gpu_model is not null or looks_like_gpu
)

select * from final
