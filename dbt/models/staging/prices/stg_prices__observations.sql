-- Price observations, one row per distinct observation: the same price seen at the same time
-- (a history re-landed as a longer file, a fetch landed twice) counts once. The copy from the
-- earliest-loaded file is kept so a row's lineage does not move when a file is landed again.
with source as (
    select * from {{ source('prices', 'gpu_price_observations') }}
),

renamed as (
    select
        lower(trim(provider)) as provider,
        trim(sku) as sku,
        sku_description,
        nullif(trim(region), '') as region,
        lower(trim(pricing_category)) as pricing_category,
        term_details,
        upper(trim(currency)) as currency,
        {{ money('price') }} as price,
        lower(trim(price_unit)) as price_unit,
        nullif(trim(gpu_model), '') as gpu_model,
        cast(gpu_count as decimal(18, 6)) as gpu_count,
        cast(observed_at as timestamp) as observed_at,
        -- Rows landed before the basis was recorded say so rather than pass for dated.
        coalesce(observed_at_basis, 'not_recorded') as observed_at_basis,
        nullif(trim(source), '') as source,
        source_format,
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
            partition by provider, sku, region, pricing_category, currency, price_unit, price, observed_at
            order by loaded_at, file_hash, source_line
        ) as copy_number
    from renamed
),

final as (
    select
        md5(
            provider || '|' || sku || '|' || coalesce(region, '') || '|' || pricing_category || '|'
            || currency || '|' || price_unit || '|' || cast(price as string) || '|'
            || {{ ts_text('observed_at') }}
        ) as observation_id,
        provider,
        sku,
        sku_description,
        region,
        pricing_category,
        term_details,
        currency,
        price,
        price_unit,
        gpu_model,
        gpu_count,
        observed_at,
        observed_at_basis,
        source,
        source_format,
        file_hash,
        source_file,
        source_line,
        loaded_at
    from ranked
    where copy_number = 1
)

select * from final
