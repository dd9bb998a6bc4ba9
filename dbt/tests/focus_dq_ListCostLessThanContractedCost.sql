-- Catches (FinOps toolkit code ListCostLessThanContractedCost, warning): a negotiated price above
-- the public list price, which makes negotiated savings negative. Lines already flagged
-- MissingListCost (ListCost 0) are left to that check.
{{ config(severity='warn', meta={'title': 'Negotiated price above the list price', 'counts': 'bill lines', 'dagster': {'ref': {'name': 'ledger_focus'}}}) }}

select x_charge_key, x_source_file, x_source_line, ProviderName, ListCost, ContractedCost
from {{ ref('ledger_focus') }}
where ListCost < ContractedCost and ListCost <> 0
