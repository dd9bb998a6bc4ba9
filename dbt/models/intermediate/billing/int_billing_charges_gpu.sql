-- GPU lines of the bill: the instance type named anywhere on the line (description, resource
-- name, SKU details, provider columns kept in x_extra) matched to the instance catalog seed,
-- so billed GPU-hours can be compared with used GPU-hours.
with charges as (
    select charge_key, ProviderName, ChargeDescription, ResourceName, ResourceType, SkuPriceDetails,
           cast(x_extra as string) as extra, ConsumedQuantity, ConsumedUnit
    from {{ ref('int_billing_charges_current') }}
),

instance_map as (
    select provider, lower(sku) as sku, gpu_model, gpu_count from {{ ref('instance_gpu_map') }}
),

tokens as (
    select distinct charge_key, lower(token) as token
    from (
        select charge_key,
               {{ explode_list("regexp_extract_all(concat_ws(' ', ChargeDescription, ResourceName, ResourceType, SkuPriceDetails, extra), "
                   ~ "'(?i)(standard_[a-z0-9_]+|[a-z][a-z0-9-]*\\.[0-9]*x?(?:large|medium|small|metal)|bm\\.gpu[a-z0-9.-]*|vm\\.gpu[a-z0-9.-]*|a[0-9]-(?:highgpu|megagpu|ultragpu)-[0-9]+g)', 1)") }} as token
        from charges
    )
),

provider_names as (
    -- FOCUS ProviderName -> the provider key used by the price and instance catalogs
    select * from (values ('aws', 'aws'), ('amazon web services', 'aws'), ('microsoft', 'azure'),
                          ('azure', 'azure'), ('google', 'gcp'), ('google cloud', 'gcp'),
                          ('oracle', 'oci'), ('oci', 'oci')) as t(provider_name, provider)
),

matched as (
    select tokens.charge_key,
           -- the longest SKU named wins; equal lengths are decided by name, so every engine agrees
           max_by(instance_map.gpu_model, lpad(cast(length(instance_map.sku) as string), 4, '0') || instance_map.sku) as gpu_model,
           max_by(instance_map.gpu_count, lpad(cast(length(instance_map.sku) as string), 4, '0') || instance_map.sku) as gpu_count,
           max_by(instance_map.sku, lpad(cast(length(instance_map.sku) as string), 4, '0') || instance_map.sku) as instance_type,
           max(provider_names.provider) as provider
    from tokens
    inner join charges on charges.charge_key = tokens.charge_key
    inner join provider_names on provider_names.provider_name = lower(charges.ProviderName)
    inner join instance_map
        on instance_map.sku = tokens.token and instance_map.provider = provider_names.provider
    group by tokens.charge_key
),

final as (
    select
        matched.charge_key,
        matched.provider,
        matched.instance_type,
        matched.gpu_model,
        matched.gpu_count,
        case
            when lower(charges.ConsumedUnit) in ('hours', 'hour', 'hrs', 'instance hours', '1 hour')
                then cast(charges.ConsumedQuantity * matched.gpu_count as decimal(38, 12))
        end as gpu_hours
    from matched
    inner join charges on charges.charge_key = matched.charge_key
)

select * from final
