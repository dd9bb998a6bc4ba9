-- Committed vs used per contract commitment: the FOCUS 1.3 Contract Commitment dataset
-- (fct_contract_commitments: what was committed) joined to the bill lines that drew it down through
-- their ContractApplied column (kept in x_extra). ContractApplied is a JSON object whose list of
-- elements sits under 'Elements' (FOCUS 1.3 erratum, as the providers' 1.3 samples write it) or
-- 'ContractApplied' (the 1.3 spec's example); each element names a ContractCommitmentId (also spelt
-- ContractCommitmentID), optionally its ContractId, and the ContractCommitmentAppliedCost (in the
-- line's BillingCurrency) and/or ContractCommitmentAppliedQuantity and Unit. Text that is not such an
-- object is ignored. A line is matched to a commitment by ContractCommitmentId and currency, and by
-- ContractId when the element names one.
-- Applied amounts are a view of the charges, never a cost of their own: nothing here adds to the
-- ledger's sums (the lines' costs are in ledger_focus once). An id the bill applies but the dataset
-- does not state is a row with x_in_dataset false and null committed figures, so it is seen.
with commitments as (
    select * from {{ ref('fct_contract_commitments') }}
),

applied_text as (
    select x_charge_key, BillingCurrency, ChargePeriodStart,
           {{ json_object_or_null(json_text('x_extra', "'ContractApplied'")) }} as applied
    from {{ ref('ledger_focus') }}
    where {{ json_text('x_extra', "'ContractApplied'") }} is not null
),

element_lists as (
    select x_charge_key, BillingCurrency, ChargePeriodStart,
           {{ json_object_list('coalesce(' ~ json_member('applied', "'Elements'") ~ ', '
                               ~ json_member('applied', "'ContractApplied'") ~ ')') }} as elements
    from applied_text
    where applied is not null
),

elements as (
    select element_lists.x_charge_key, element_lists.BillingCurrency, element_lists.ChargePeriodStart, e.element
    from element_lists, {{ lateral_explode('element_lists.elements') }} as e(element)
    where element_lists.elements is not null
),

applied as (
    select
        x_charge_key,
        BillingCurrency,
        ChargePeriodStart,
        trim(coalesce({{ json_text('element', "'ContractCommitmentId'") }},
                      {{ json_text('element', "'ContractCommitmentID'") }})) as ContractCommitmentId,
        nullif(trim(coalesce({{ json_text('element', "'ContractId'") }},
                             {{ json_text('element', "'ContractID'") }})), '') as ContractId,
        try_cast({{ json_text('element', "'ContractCommitmentAppliedCost'") }} as decimal(38, 12)) as applied_cost,
        try_cast({{ json_text('element', "'ContractCommitmentAppliedQuantity'") }} as decimal(38, 12)) as applied_quantity,
        {{ json_text('element', "'ContractCommitmentAppliedUnit'") }} as applied_unit
    from elements
),

matched as (
    select applied.*, commitments.ContractId as commitment_contract_id
    from applied
    left join commitments
        on commitments.ContractCommitmentId = applied.ContractCommitmentId
        and commitments.BillingCurrency = applied.BillingCurrency
        and (applied.ContractId is null or commitments.ContractId = applied.ContractId)
    where applied.ContractCommitmentId is not null and applied.ContractCommitmentId <> ''
),

used as (
    select
        ContractCommitmentId,
        coalesce(commitment_contract_id, ContractId) as ContractId,
        BillingCurrency,
        commitment_contract_id is not null as x_in_dataset,
        count(distinct x_charge_key) as x_applied_lines,
        {{ money('coalesce(sum(applied_cost), 0)') }} as x_applied_cost,
        {{ money('sum(applied_quantity)') }} as x_applied_quantity,
        max(applied_unit) as x_applied_unit,
        min(ChargePeriodStart) as x_first_charge_start,
        max(ChargePeriodStart) as x_last_charge_start
    from matched
    group by ContractCommitmentId, coalesce(commitment_contract_id, ContractId), BillingCurrency,
             commitment_contract_id is not null
),

final as (
    select
        coalesce(commitments.ContractCommitmentId, used.ContractCommitmentId) as ContractCommitmentId,
        coalesce(commitments.ContractId, used.ContractId) as ContractId,
        coalesce(commitments.BillingCurrency, used.BillingCurrency) as BillingCurrency,
        commitments.ContractCommitmentCategory,
        commitments.ContractCommitmentType,
        commitments.ContractCommitmentPeriodStart,
        commitments.ContractCommitmentPeriodEnd,
        commitments.ContractCommitmentCost as x_committed_cost,
        commitments.ContractCommitmentQuantity as x_committed_quantity,
        coalesce(commitments.ContractCommitmentUnit, used.x_applied_unit) as x_unit,
        coalesce(used.x_applied_lines, 0) as x_applied_lines,
        coalesce(used.x_applied_cost, {{ money('0') }}) as x_applied_cost,
        used.x_applied_quantity,
        {{ money('commitments.ContractCommitmentCost - coalesce(used.x_applied_cost, 0)') }} as x_remaining_cost,
        {{ money('commitments.ContractCommitmentQuantity - coalesce(used.x_applied_quantity, 0)') }} as x_remaining_quantity,
        -- Spend commitments burn down by cost, Usage commitments by quantity
        case when commitments.ContractCommitmentCategory = 'Usage'
             then {{ safe_unit_cost('100 * coalesce(used.x_applied_quantity, 0)', 'commitments.ContractCommitmentQuantity') }}
             else {{ safe_unit_cost('100 * coalesce(used.x_applied_cost, 0)', 'commitments.ContractCommitmentCost') }}
        end as x_used_pct,
        used.x_first_charge_start,
        used.x_last_charge_start,
        commitments.ContractCommitmentId is not null as x_in_dataset
    from commitments
    full outer join used
        on used.x_in_dataset
        and used.ContractCommitmentId = commitments.ContractCommitmentId
        and used.ContractId = commitments.ContractId
        and used.BillingCurrency = commitments.BillingCurrency
)

select * from final
