-- Catches (no toolkit code; warning): the same charge delivered in two different files of one
-- delivery (an export dropped twice under different names with slightly different bytes, or
-- overlapping part files), which would double it in the bill. Identical bytes are already
-- de-duplicated at landing; this compares rows: same provider, account, ChargePeriodStart,
-- ResourceId, SkuPriceId, BilledCost and ChargeDescription in two or more files.
{{ config(severity='warn', meta={'title': 'Same charge delivered in two files', 'counts': 'charges', 'dagster': {'ref': {'name': 'int_billing_charges_current'}}}) }}

select delivery_run_id, ProviderName, BillingAccountId, ChargePeriodStart, ResourceId, SkuPriceId, BilledCost,
       ChargeDescription, count(distinct x_file_hash) as files, string_agg(distinct x_source_file, ', ') as file_names
from {{ ref('int_billing_charges_current') }}
group by delivery_run_id, ProviderName, BillingAccountId, ChargePeriodStart, ResourceId, SkuPriceId, BilledCost,
         ChargeDescription
having count(distinct x_file_hash) > 1
