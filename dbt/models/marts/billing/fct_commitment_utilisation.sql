-- Commitment discount utilisation per commitment, billing period and currency. A commitment is
-- its CommitmentDiscountId within the provider and billing account. A line that names no billing
-- account (the FOCUS spec examples all reuse '<my-commitment-discount-id>' with no account) is
-- scoped to its delivered file instead, so unrelated files never merge into one commitment:
-- x_account_scope = BillingAccountId, else 'file:' || x_file_hash.
-- Used / unused from CommitmentDiscountStatus on the usage lines: amounts are EffectiveCost (the
-- amortised commitment cost), quantities CommitmentDiscountQuantity. Utilisation % = used /
-- (used + unused) x 100 on the amounts; null when the period has no Used/Unused line.
-- Purchases (ChargeCategory Purchase): BilledCost is what the invoice charges; EffectiveCost is 0
-- for a prepaid or recurring purchase whose cost is amortised onto the Used/Unused lines, so
-- x_purchase_amortised_cost = purchase BilledCost - purchase EffectiveCost is the part of the
-- purchase that shows up as EffectiveCost elsewhere (possibly in later periods).
with ledger as (
    select * from {{ ref('ledger_focus') }}
    where CommitmentDiscountId is not null
),

lines as (
    select
        ProviderName,
        coalesce(BillingAccountId, 'file:' || x_file_hash) as x_account_scope,
        CommitmentDiscountId,
        cast(BillingPeriodStart as date) as billing_period_start,
        BillingCurrency,
        CommitmentDiscountName, CommitmentDiscountCategory, CommitmentDiscountType, CommitmentDiscountUnit,
        ChargeCategory, CommitmentDiscountStatus, BilledCost, EffectiveCost, CommitmentDiscountQuantity,
        x_source_file
    from ledger
),

totals as (
    select
        ProviderName,
        x_account_scope,
        CommitmentDiscountId,
        billing_period_start,
        BillingCurrency,
        any_value(CommitmentDiscountName) as CommitmentDiscountName,
        any_value(CommitmentDiscountCategory) as CommitmentDiscountCategory,
        any_value(CommitmentDiscountType) as CommitmentDiscountType,
        any_value(CommitmentDiscountUnit) as CommitmentDiscountUnit,
        count(*) as x_charge_lines,
        {{ money("coalesce(sum(EffectiveCost) filter (where ChargeCategory = 'Usage' and CommitmentDiscountStatus = 'Used'), 0)") }}
            as x_used_cost,
        {{ money("coalesce(sum(EffectiveCost) filter (where ChargeCategory = 'Usage' and CommitmentDiscountStatus = 'Unused'), 0)") }}
            as x_unused_cost,
        {{ money("sum(CommitmentDiscountQuantity) filter (where ChargeCategory = 'Usage' and CommitmentDiscountStatus = 'Used')") }}
            as x_used_quantity,
        {{ money("sum(CommitmentDiscountQuantity) filter (where ChargeCategory = 'Usage' and CommitmentDiscountStatus = 'Unused')") }}
            as x_unused_quantity,
        count(*) filter (where ChargeCategory = 'Usage' and CommitmentDiscountStatus in ('Used', 'Unused'))
            as x_status_lines,
        count(*) filter (where ChargeCategory = 'Purchase') as x_purchase_lines,
        {{ money("coalesce(sum(BilledCost) filter (where ChargeCategory = 'Purchase'), 0)") }} as x_purchase_billed_cost,
        {{ money("coalesce(sum(EffectiveCost) filter (where ChargeCategory = 'Purchase'), 0)") }} as x_purchase_effective_cost,
        {{ money('sum(BilledCost)') }} as BilledCost,
        {{ money('sum(EffectiveCost)') }} as EffectiveCost,
        min(x_source_file) as x_source_file
    from lines
    group by all
),

final as (
    select
        {{ star_except(['x_source_file']) }},
        {{ money('x_purchase_billed_cost - x_purchase_effective_cost') }} as x_purchase_amortised_cost,
        case when x_status_lines > 0
             then {{ safe_unit_cost('100 * x_used_cost', 'x_used_cost + x_unused_cost') }}
        end as x_utilisation_pct,
        x_source_file
    from totals
)

select * from final
