-- The published billing ledger: FOCUS 1.3 column names plus x_ allocation and lineage columns.
with allocated as (
    select * from {{ ref('int_billing_charges_allocated') }}
),

final as (
    select
        charge_key as x_charge_key,
        BilledCost, EffectiveCost, ListCost, ContractedCost, ListUnitPrice, ContractedUnitPrice,
        ConsumedQuantity, ConsumedUnit, PricingQuantity, PricingUnit, PricingCategory,
        BillingCurrency, BillingPeriodStart, BillingPeriodEnd, ChargePeriodStart, ChargePeriodEnd,
        ChargeCategory, ChargeClass, ChargeDescription, ChargeFrequency,
        CommitmentDiscountCategory, CommitmentDiscountId, CommitmentDiscountName, CommitmentDiscountStatus,
        CommitmentDiscountType, CommitmentDiscountQuantity, CommitmentDiscountUnit,
        ProviderName, PublisherName, InvoiceIssuerName, InvoiceId,
        BillingAccountId, BillingAccountName, SubAccountId, SubAccountName,
        RegionId, RegionName, AvailabilityZone, ResourceId, ResourceName, ResourceType,
        ServiceCategory, ServiceName, SkuId, SkuPriceId, SkuPriceDetails, Tags,
        x_team, x_workload_id, x_environment, x_allocation_basis,
        x_focus_version, x_source_format, x_extra,
        x_source_file, x_source_line, x_file_hash
    from allocated
)

select * from final
