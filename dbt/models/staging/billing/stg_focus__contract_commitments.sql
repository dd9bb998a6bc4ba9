-- FOCUS 1.3 Contract Commitment rows, one per commitment: a provider re-delivers the whole dataset
-- with each export, so the latest landed row of a ContractCommitmentId (within its contract) wins.
-- Not a billed charge: nothing here reaches the ledger's sums.
with source as (
    select * from {{ source('billing', 'contract_commitments') }}
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
        upper(trim(BillingCurrency)) as BillingCurrency,
        _source_file as x_source_file,
        _source_line as x_source_line
    from source
    qualify row_number() over (
        partition by ContractId, ContractCommitmentId
        order by _loaded_at desc, _source_file desc, _source_line desc
    ) = 1
)

select * from final
