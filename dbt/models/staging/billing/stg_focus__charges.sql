-- Billing charge lines with a stable key, normalised enumerations and upper-case currency.
-- A line without a currency (the FOCUS spec examples have no BillingCurrency column; the parser
-- names the file in dq_rejects) keeps NULL here: int_billing_charges_current fills it from the
-- registry's policies.default_currency_by_account or holds the line out (fct_billing_held_out).
-- A line without EffectiveCost (a FOCUS file without the column, or an empty value) is amortised at its
-- billed cost, exact for on-demand lines: NULL there failed the blocking checks of every chargeback mart,
-- withholding the whole publication. The warning check assert_effective_cost_from_billed lists those lines.
with source as (
    select * from {{ source('billing', 'billing_charges') }}
),

final as (
    select
        _file_hash || ':' || cast(_source_line as string) as charge_key,
        BilledCost, coalesce(EffectiveCost, BilledCost) as EffectiveCost, ListCost, ContractedCost, ListUnitPrice, ContractedUnitPrice,
        ConsumedQuantity, PricingQuantity, CommitmentDiscountQuantity,
        BillingPeriodStart, BillingPeriodEnd, ChargePeriodStart, ChargePeriodEnd,
        nullif(upper(trim(BillingCurrency)), '') as BillingCurrency,
        ChargeCategory, ChargeClass, ChargeDescription,
        -- FOCUS spells it Usage-Based; some exports write Usage-based.
        case when lower(ChargeFrequency) = 'usage-based' then 'Usage-Based' else ChargeFrequency end as ChargeFrequency,
        CommitmentDiscountCategory, CommitmentDiscountId, CommitmentDiscountName, CommitmentDiscountStatus,
        CommitmentDiscountType, CommitmentDiscountUnit,
        ConsumedUnit, PricingUnit, PricingCategory, ProviderName, PublisherName, InvoiceIssuerName, InvoiceId,
        RegionId, RegionName, AvailabilityZone, ResourceId, ResourceName, ResourceType,
        ServiceCategory, ServiceName, SkuId, SkuPriceId, SkuPriceDetails,
        SubAccountId, SubAccountName, BillingAccountId, BillingAccountName,
        Tags,
        x_focus_version, x_source_format, x_extra,
        _file_hash as x_file_hash,
        _source_file as x_source_file,
        _source_line as x_source_line
    from source
)

select * from final
