-- Catches (FinOps toolkit code MissingContractedCost, warning): current ledger lines whose
-- ContractedCost is null or 0 while EffectiveCost > 0, so negotiated vs commitment savings cannot
-- be split (fct_billing_savings takes the EffectiveCost as the ContractedCost).
{{ config(severity='warn', meta={'title': 'Bill lines without a negotiated cost', 'counts': 'bill lines', 'dagster': {'ref': {'name': 'ledger_focus'}}}) }}

select x_charge_key, x_source_file, x_source_line, ProviderName, ChargeCategory, ContractedCost, EffectiveCost
from {{ ref('ledger_focus') }}
where coalesce(ContractedCost, 0) = 0 and EffectiveCost > 0
