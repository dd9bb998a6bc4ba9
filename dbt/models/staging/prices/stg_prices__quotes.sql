-- Manual commercial quotes, one row per quote_id. A quote sheet landed again with corrections
-- replaces the earlier copy of the same quote (latest-loaded file wins).
with source as (
    select * from {{ source('prices', 'price_quotes') }}
),

renamed as (
    select
        trim(quote_id) as quote_id,
        lower(trim(provider)) as provider,
        trim(sku) as sku,
        nullif(trim(gpu_model), '') as gpu_model,
        cast(gpu_count as decimal(18, 6)) as gpu_count,
        nullif(trim(region), '') as region,
        lower(trim(pricing_category)) as pricing_category,
        upper(trim(currency)) as currency,
        {{ money('price') }} as price,
        lower(trim(price_unit)) as price_unit,
        cast(term_months as integer) as term_months,
        {{ money('minimum_commitment') }} as minimum_commitment,
        cancellation_terms,
        support_tier,
        cast(quoted_at as timestamp) as quoted_at,
        quoted_by,
        interconnect,
        gpus_per_node,
        node_form_factor,
        storage_network,
        driver_cuda,
        orchestration,
        serving_frameworks,
        idle_billed,
        auto_shutdown,
        usage_export_format,
        egress_fees,
        network_boundary,
        data_residency,
        compliance,
        _file_hash as file_hash,
        _source_file as source_file,
        _source_line as source_line,
        _loaded_at as loaded_at
    from source
),

ranked as (
    select
        *,
        row_number() over (
            partition by quote_id order by loaded_at desc, file_hash desc, source_line desc
        ) as copy_number
    from renamed
),

final as (
    select
        quote_id, provider, sku, gpu_model, gpu_count, region, pricing_category, currency, price,
        price_unit, term_months, minimum_commitment, cancellation_terms, support_tier, quoted_at,
        quoted_by, interconnect, gpus_per_node, node_form_factor, storage_network, driver_cuda,
        orchestration, serving_frameworks, idle_billed, auto_shutdown, usage_export_format,
        egress_fees, network_boundary, data_residency, compliance,
        file_hash, source_file, source_line, loaded_at
    from ranked
    where copy_number = 1
)

select * from final
