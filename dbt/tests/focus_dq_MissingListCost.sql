-- Catches (FinOps toolkit code MissingListCost, warning): current ledger lines whose ListCost is
-- null or 0 while ContractedCost > 0, so list-price savings cannot be computed for them
-- (fct_billing_savings takes the ContractedCost as the ListCost, i.e. no negotiated savings).
{{ config(severity='warn', meta={'title': 'Bill lines without a list cost', 'counts': 'bill lines', 'dagster': {'ref': {'name': 'ledger_focus'}}}) }}

select x_charge_key, x_source_file, x_source_line, ProviderName, ChargeCategory, ListCost, ContractedCost
from {{ ref('ledger_focus') }}
where coalesce(ListCost, 0) = 0 and ContractedCost > 0
