-- Billed GPU-hours from the ledger: usage lines for GPU instances (instance type found in SkuId,
-- ResourceType, the ARM SKU name or an AWS "... <type> Instance Hour" description, matched to
-- instance_gpu_map) priced in hours. GPU-hours = hours x GPUs per instance, spread over the hour
-- buckets of the charge period in proportion to overlap. Grain: ledger line x hour_start.
with ledger as (
    select * from {{ ref('ledger_focus') }}
),

instance_map as (
    select lower(provider) as provider, lower(sku) as sku, gpu_model, cast(gpu_count as double) as gpu_count
    from {{ ref('instance_gpu_map') }}
    where gpu_count is not null
),

gpu_lines as (
    select
        ledger.x_charge_key,
        ledger.ProviderName,
        case lower(ledger.ProviderName)
            when 'amazon web services' then 'aws' when 'microsoft' then 'azure' when 'oracle' then 'oci'
            when 'google cloud' then 'gcp' else lower(ledger.ProviderName)
        end as provider,
        coalesce(ledger.SubAccountId, ledger.BillingAccountId) as account_id,
        ledger.ChargePeriodStart,
        ledger.ChargePeriodEnd,
        cast(ledger.ConsumedQuantity as double) as instance_hours,
        ledger.x_team,
        ledger.x_workload_id,
        lower(coalesce(
            regexp_extract(ledger.ChargeDescription, '([A-Za-z0-9-]+\.[A-Za-z0-9-]+) Instance Hour', 1), ''
        )) as described_type,
        lower(coalesce(ledger.x_extra ->> 'ArmSkuName', ledger.x_extra ->> 'InstanceType', '')) as extra_type,
        lower(coalesce(ledger.SkuId, '')) as sku_id,
        lower(coalesce(ledger.ResourceType, '')) as resource_type
    from ledger
    where ledger.ChargeCategory = 'Usage'
      and ledger.ChargePeriodEnd > ledger.ChargePeriodStart
      and (lower(ledger.ConsumedUnit) in ('hours', 'hour', 'hrs', 'instance per hour', 'instance hours')
           or lower(ledger.ConsumedUnit) like '1 hour%')
),

mapped as (
    select gpu_lines.*, instance_map.sku as instance_type, instance_map.gpu_model, instance_map.gpu_count
    from gpu_lines
    inner join instance_map
        on instance_map.provider = case when gpu_lines.provider = 'amazon web services' then 'aws' else gpu_lines.provider end
        and instance_map.sku in (gpu_lines.described_type, gpu_lines.extra_type, gpu_lines.sku_id, gpu_lines.resource_type)
    qualify row_number() over (partition by gpu_lines.x_charge_key order by instance_map.sku) = 1
),

hours as (
    select mapped.*, {{ hour_buckets('ChargePeriodStart', 'ChargePeriodEnd') }} as hour_start
    from mapped
),

final as (
    select
        x_charge_key,
        hour_start,
        provider || ':' || coalesce(account_id, '(no account)') as pool_id,
        provider,
        account_id,
        instance_type,
        gpu_model,
        gpu_count,
        coalesce(x_team, '(unallocated)') as team_id,
        x_workload_id as workload_id,
        instance_hours * gpu_count
            * {{ overlap_hours('ChargePeriodStart', 'ChargePeriodEnd', 'hour_start') }}
            / (date_diff('microsecond', ChargePeriodStart, ChargePeriodEnd) / 3600000000.0)
            as billed_gpu_hours
    from hours
)

select * from final
