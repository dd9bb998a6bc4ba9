-- What the bill says a GPU-hour cost against what the provider listed that day.
-- One row per GPU usage line of the bill (ledger_focus with x_gpu_hours > 0, ChargeCategory Usage):
-- billed and effective cost per GPU-hour, the on-demand list price per GPU-hour valid at the start
-- of the charge (fct_gpu_price_history: same provider, SKU, region and currency, valid_from <=
-- ChargePeriodStart < valid_to), their ratio and a flag. The list price is the public on-demand
-- one whatever the line's PricingCategory, so a spot or committed line below list is expected.
-- Bounds and tolerance: warehouse/reference.py PLAUSIBILITY (macro plausibility), overridable by
-- the registry policy bill_rate_tolerance (docs/sources/billing.md "Bill versus list price").
with lines as (
    select
        ledger.x_charge_key, ledger.ChargePeriodStart, ledger.BillingPeriodStart, ledger.ProviderName,
        gpu.provider, ledger.x_instance_type, ledger.x_gpu_model, ledger.x_gpu_count, ledger.RegionId,
        ledger.PricingCategory, ledger.CommitmentDiscountId, ledger.BillingCurrency,
        ledger.x_gpu_hours, ledger.BilledCost, ledger.EffectiveCost, ledger.x_team,
        ledger.x_source_file, ledger.x_source_line
    from {{ ref('ledger_focus') }} as ledger
    inner join {{ ref('int_billing_charges_gpu') }} as gpu on gpu.charge_key = ledger.x_charge_key
    where ledger.x_gpu_hours > 0 and ledger.ChargeCategory = 'Usage'
),

list_prices as (
    select price_interval_id, provider, lower(sku) as sku, region, currency, price_per_gpu_hour, valid_from, valid_to
    from {{ ref('fct_gpu_price_history') }}
    where pricing_category = 'on-demand' and price_per_gpu_hour is not null
),

tolerance as (
    select coalesce(
        (select cast({{ json_scalar_text('value') }} as decimal(18, 6))
         from {{ ref('stg_registry__policies') }} where policy = 'bill_rate_tolerance'),
        cast({{ plausibility('bill_rate_tolerance') }} as decimal(18, 6))
    ) as tolerance
),

priced as (
    select
        lines.*,
        -- at most one interval per key covers an instant (assert_gpu_price_intervals_do_not_overlap)
        max(list_prices.price_interval_id) as list_price_interval_id,
        max(list_prices.price_per_gpu_hour) as list_per_gpu_hour
    from lines
    left join list_prices
        on list_prices.provider = lines.provider
        and list_prices.sku = lower(lines.x_instance_type)
        and list_prices.region = lines.RegionId
        and list_prices.currency = lines.BillingCurrency
        and list_prices.valid_from <= lines.ChargePeriodStart
        and (list_prices.valid_to is null or lines.ChargePeriodStart < list_prices.valid_to)
    group by all
),

rated as (
    select
        priced.*,
        cast(BilledCost / x_gpu_hours as decimal(38, 12)) as billed_per_gpu_hour,
        cast(EffectiveCost / x_gpu_hours as decimal(38, 12)) as effective_per_gpu_hour,
        case when list_per_gpu_hour > 0
            then cast(EffectiveCost / x_gpu_hours / list_per_gpu_hour as decimal(18, 6)) end as ratio,
        tolerance.tolerance
    from priced
    cross join tolerance
),

final as (
    select
        x_charge_key,
        cast(ChargePeriodStart as date) as charge_date,
        BillingPeriodStart as billing_period_start,
        provider,
        ProviderName as provider_name,
        x_instance_type as instance_type,
        x_gpu_model as gpu_model,
        x_gpu_count as gpu_count,
        RegionId as region,
        PricingCategory as pricing_category,
        BillingCurrency as currency,
        x_gpu_hours as gpu_hours,
        BilledCost as billed_cost,
        EffectiveCost as effective_cost,
        billed_per_gpu_hour,
        effective_per_gpu_hour,
        list_per_gpu_hour,
        list_price_interval_id,
        ratio,
        tolerance,
        case
            when effective_per_gpu_hour
                 > {{ plausibility('max_per_gpu_hour') }} * {{ units_per_usd_ceiling('BillingCurrency') }} then 'implausible'
            when list_per_gpu_hour is null then 'no_list_price'
            when ratio > 1 + tolerance then 'overbilled'
            when (PricingCategory = 'Committed' or CommitmentDiscountId is not null) and ratio >= 1 - tolerance
                then 'discount_uncaptured'
            when PricingCategory = 'Standard' and ratio < 1 - tolerance then 'below_list'
            else 'ok'
        end as flag,
        x_team as team_id,
        x_source_file as source_file,
        x_source_line as source_line
    from rated
)

select * from final
