-- Catches (no toolkit code; warning): a billing account whose period is billed in more than one
-- BillingCurrency (a mixed or mis-mapped export; 'XXX' marks lines that had no currency), which
-- splits its invoice across currencies.
{{ config(severity='warn', meta={'title': 'Billing account billed in several currencies in one period', 'counts': 'account-periods', 'dagster': {'ref': {'name': 'ledger_focus'}}}) }}

select ProviderName, BillingAccountId, BillingPeriodStart,
       count(distinct BillingCurrency) as currencies, string_agg(distinct BillingCurrency, ', ') as currency_list
from {{ ref('ledger_focus') }}
group by ProviderName, BillingAccountId, BillingPeriodStart
having count(distinct BillingCurrency) > 1
