-- The current delivery of every billing period: when an export is re-delivered (corrections),
-- the files of the newest delivery replace the older ones for the same provider, account and
-- period. Files loaded in one run are parts of one delivery and are all kept. A line without a
-- currency takes the registry's default for its billing account, else it is held out.
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

currency_policy as (
    -- policies.default_currency_by_account: {"<BillingAccountId>": "EUR", "default": "USD"} (default: any other account).
    select max(value) as by_account from {{ ref('stg_registry__policies') }}
    where policy = 'default_currency_by_account'
),

with_currency as (
    select
        {{ star_except(['BillingCurrency'], 'charge_delivery') }},
        upper(trim(coalesce(charge_delivery.BillingCurrency,
                            {{ json_text('currency_policy.by_account', 'charge_delivery.BillingAccountId') }},
                            {{ json_text('currency_policy.by_account', "'default'") }}))) as BillingCurrency
    from charge_delivery
    cross join currency_policy
),

final as (
    -- A line with no currency after the policy is held out of the ledger (fct_billing_held_out).
    select {{ star_except(['delivery_loaded_at'], 'charge_delivery') }}
    from with_currency as charge_delivery
    inner join latest_delivery
        on charge_delivery.delivery_run_id = latest_delivery.delivery_run_id
        and charge_delivery.ProviderName is not distinct from latest_delivery.ProviderName
        and charge_delivery.BillingAccountId is not distinct from latest_delivery.BillingAccountId
        and charge_delivery.BillingPeriodStart is not distinct from latest_delivery.BillingPeriodStart
        and charge_delivery.x_source_format is not distinct from latest_delivery.x_source_format
    where charge_delivery.BillingCurrency is not null
)

select * from final
