-- Warns with every file whose bill lines are held out of the ledger for want of a currency
-- (fct_billing_held_out): the invoice cannot reconcile until the export names BillingCurrency or
-- the registry's policies.default_currency_by_account names the account's currency. Warn, not
-- error: the other files are right and publish.
{{ config(severity='warn', meta={'title': 'Bill lines held out for want of a currency', 'counts': 'files'}) }}
select source_file, billing_account_id, billing_period_start, lines_held_out, reason
from {{ ref('fct_billing_held_out') }}
