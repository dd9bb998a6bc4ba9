-- The current delivery of every billing period: when an export is re-delivered (corrections),
-- the files of the newest delivery replace the older ones for the same provider, account and
-- period. Files loaded in one run are parts of one delivery and are all kept.
with charges as (
    select * from {{ ref('stg_focus__charges') }}
),

files as (
    select file_hash, delivery_run_id, observed_at, loaded_at
    from {{ ref('stg_audit__file_loads') }}
    where family = 'billing'
),

charge_delivery as (
    select charges.*, files.delivery_run_id, files.loaded_at as delivery_loaded_at
    from charges
    inner join files on charges.x_file_hash = files.file_hash
),

latest_delivery as (
    select ProviderName, BillingAccountId, BillingPeriodStart, x_source_format,
           max_by(delivery_run_id, delivery_loaded_at) as delivery_run_id
    from charge_delivery
    group by all
),

final as (
    select {{ star_except(['delivery_loaded_at'], 'charge_delivery') }}
    from charge_delivery
    inner join latest_delivery
        on charge_delivery.delivery_run_id = latest_delivery.delivery_run_id
        and charge_delivery.ProviderName is not distinct from latest_delivery.ProviderName
        and charge_delivery.BillingAccountId is not distinct from latest_delivery.BillingAccountId
        and charge_delivery.BillingPeriodStart is not distinct from latest_delivery.BillingPeriodStart
        and charge_delivery.x_source_format is not distinct from latest_delivery.x_source_format
)

select * from final
