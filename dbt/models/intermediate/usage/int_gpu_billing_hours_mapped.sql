-- Billed GPU-hours from the ledger: GPU instance usage lines (ledger_focus identifies them:
-- x_instance_type, x_gpu_model, x_gpu_count from int_billing_charges_gpu) priced in hours.
-- GPU-hours = hours x GPUs per instance, spread over the hour buckets of the charge period in
-- proportion to overlap. Grain: ledger line x hour_start. resource_id / resource_name (lower case) are the
-- fleet identity scheduler and telemetry hosts are matched to (int_gpu_usage_hourly).
with ledger as (
    select * from {{ ref('ledger_focus') }}
),

mapped as (
    select
        x_charge_key,
        case lower(ProviderName)
            when 'amazon web services' then 'aws' when 'microsoft' then 'azure' when 'oracle' then 'oci'
            when 'google cloud' then 'gcp' else lower(ProviderName)
        end as provider,
        coalesce(SubAccountId, BillingAccountId) as account_id,
        ChargePeriodStart,
        ChargePeriodEnd,
        cast(ConsumedQuantity as double) as instance_hours,
        x_team,
        x_workload_id,
        lower(ResourceId) as resource_id,
        lower(ResourceName) as resource_name,
        x_instance_type as instance_type,
        x_gpu_model as gpu_model,
        cast(x_gpu_count as double) as gpu_count,
        x_file_hash
    from ledger
    where ChargeCategory = 'Usage'
      and x_gpu_model is not null and x_gpu_hours is not null
      and ChargePeriodEnd > ChargePeriodStart
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
        resource_id,
        resource_name,
        instance_hours * gpu_count
            * {{ overlap_hours('ChargePeriodStart', 'ChargePeriodEnd', 'hour_start') }}
            / {{ hours_between('ChargePeriodStart', 'ChargePeriodEnd') }}
            as billed_gpu_hours,
        x_file_hash
    from hours
)

select * from final
