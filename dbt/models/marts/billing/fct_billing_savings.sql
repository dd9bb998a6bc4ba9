-- Savings per billing period, currency, provider, team and service category, with the FinOps
-- toolkit formulas: negotiated savings = ListCost - ContractedCost, commitment savings =
-- ContractedCost - EffectiveCost, total savings = ListCost - EffectiveCost, effective savings
-- rate = total savings / ListCost.
-- Missing prices as the toolkit does (codes MissingContractedCost / MissingListCost): a
-- ContractedCost that is null or 0 on a line with EffectiveCost > 0 is taken as the EffectiveCost,
-- then a ListCost that is null or 0 with (filled) ContractedCost > 0 is taken as the ContractedCost,
-- so such lines show no savings instead of invented ones. Only lines with List, Contracted and
-- Effective cost all present after that fill contribute to the formulas (and to the rate's
-- denominator x_ListCostForSavings); the rest are left out, not counted as zero-price lines.
-- Only Usage lines carry savings: a Purchase line's EffectiveCost is 0 because its cost is
-- amortised onto the usage it covers (counting it would double the savings), Tax and Credit are
-- not priced usage. An Unused commitment line consumed nothing, so its List/Contracted cost is 0
-- and its EffectiveCost is a commitment loss (negative savings).
-- ListCost, ContractedCost, EffectiveCost and BilledCost are the plain sums over every line.
with ledger as (
    select * from {{ ref('ledger_focus') }}
),

lines as (
    select
        cast(BillingPeriodStart as date) as billing_period_start,
        BillingCurrency, ProviderName, x_team, ServiceCategory,
        ListCost, ContractedCost, EffectiveCost, BilledCost,
        ChargeCategory = 'Usage' as is_savings_line,
        coalesce(CommitmentDiscountStatus = 'Unused', false) as is_unused_commitment,
        case
            when coalesce(ContractedCost, 0) = 0 and EffectiveCost > 0 then EffectiveCost
            else ContractedCost
        end as contracted_filled
    from ledger
),

filled as (
    select
        *,
        case
            when not is_savings_line then null
            when is_unused_commitment then 0
            else contracted_filled
        end as contracted_f,
        case
            when not is_savings_line then null
            when is_unused_commitment then 0
            when coalesce(ListCost, 0) = 0 and contracted_filled > 0 then contracted_filled
            else ListCost
        end as list_f
    from lines
),

priced as (
    -- A line enters the formulas only with all three prices present, so negotiated + commitment
    -- savings always equal total savings.
    select
        *,
        case when list_f is not null and contracted_f is not null and EffectiveCost is not null
             then list_f end as list_for_savings,
        case when list_f is not null and contracted_f is not null and EffectiveCost is not null
             then contracted_f end as contracted_for_savings,
        case when list_f is not null and contracted_f is not null and EffectiveCost is not null
             then EffectiveCost end as effective_for_savings
    from filled
),

final as (
    select
        billing_period_start,
        BillingCurrency,
        ProviderName,
        x_team,
        ServiceCategory,
        count(*) as x_charge_lines,
        {{ money('sum(ListCost)') }} as ListCost,
        {{ money('sum(ContractedCost)') }} as ContractedCost,
        {{ money('sum(EffectiveCost)') }} as EffectiveCost,
        {{ money('sum(BilledCost)') }} as BilledCost,
        count(*) filter (where is_savings_line and not is_unused_commitment
                         and coalesce(ContractedCost, 0) = 0 and EffectiveCost > 0) as x_lines_missing_contracted_cost,
        count(*) filter (where is_savings_line and not is_unused_commitment
                         and coalesce(ListCost, 0) = 0 and contracted_filled > 0) as x_lines_missing_list_cost,
        {{ money('coalesce(sum(list_for_savings - contracted_for_savings), 0)') }} as x_NegotiatedDiscountSavings,
        {{ money('coalesce(sum(contracted_for_savings - effective_for_savings), 0)') }} as x_CommitmentDiscountSavings,
        {{ money('coalesce(sum(list_for_savings - effective_for_savings), 0)') }} as x_TotalSavings,
        {{ money('sum(list_for_savings)') }} as x_ListCostForSavings,
        {{ safe_unit_cost('sum(list_for_savings - effective_for_savings)', 'sum(list_for_savings)') }}
            as x_EffectiveSavingsRate
    from priced
    group by all
)

select * from final
