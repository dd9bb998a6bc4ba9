-- Catches: savings that do not add up. For every row of fct_billing_savings, negotiated plus
-- commitment savings must equal total savings (each line's List - Contracted + Contracted -
-- Effective = List - Effective after the missing-price fill), to the cent. Blocking.
{{ config(meta={'dagster': {'ref': {'name': 'fct_billing_savings'}}}) }}

select *
from {{ ref('fct_billing_savings') }}
where round(x_NegotiatedDiscountSavings + x_CommitmentDiscountSavings - x_TotalSavings, 2) <> 0
