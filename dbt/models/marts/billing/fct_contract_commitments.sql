-- The contract commitments the providers state (FOCUS 1.3 Contract Commitment dataset), one row per
-- commitment, the latest delivery winning. A separate dataset from the bill:
-- what was committed, not what was charged; the bill's ContractApplied column says which charges
-- drew down which commitment.
with commitments as (
    select * from {{ ref('stg_focus__contract_commitments') }}
),

final as (
    select
        ContractCommitmentId,
        ContractId,
        ContractCommitmentType,
        ContractCommitmentCategory,
        ContractCommitmentDescription,
        ContractCommitmentCost,
        ContractCommitmentQuantity,
        ContractCommitmentUnit,
        ContractCommitmentPeriodStart,
        ContractCommitmentPeriodEnd,
        ContractPeriodStart,
        ContractPeriodEnd,
        BillingCurrency,
        x_source_file
    from commitments
)

select * from final
