-- The published billing ledger: FOCUS 1.3 column names plus x_ allocation and lineage columns.
with allocated as (
    select * from {{ ref('int_billing_charges_allocated') }}
),

gpu as (
    select * from {{ ref('int_billing_charges_gpu') }}
),

final as (
    select
        allocated.charge_key as x_charge_key,
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
        gpu.gpu_model as x_gpu_model, gpu.gpu_count as x_gpu_count, gpu.gpu_hours as x_gpu_hours,
        gpu.instance_type as x_instance_type,
        x_focus_version, x_source_format, x_extra,
        x_source_file, x_source_line, x_file_hash
    from allocated
    left join gpu on gpu.charge_key = allocated.charge_key
)

select * from final
