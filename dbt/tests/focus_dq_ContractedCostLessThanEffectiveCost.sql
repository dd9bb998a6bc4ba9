-- Catches (FinOps toolkit code ContractedCostLessThanEffectiveCost, warning): a line that cost
-- more after commitment discounts than at the negotiated price (negative commitment savings: a
-- commitment worse than the negotiated rate, or bad prices). Lines already flagged
-- MissingContractedCost (ContractedCost 0) are left to that check.
{{ config(severity='warn', meta={'title': 'Commitment cost above the negotiated price', 'counts': 'bill lines', 'dagster': {'ref': {'name': 'ledger_focus'}}}) }}

select x_charge_key, x_source_file, x_source_line, ProviderName, ContractedCost, EffectiveCost
from {{ ref('ledger_focus') }}
where ContractedCost < EffectiveCost and ContractedCost <> 0
