-- Catches (no toolkit code; warning): a landed billing file whose FOCUS version makes a column
-- mandatory and non-null, but the column is null (or absent) on some of its rows, e.g. the FOCUS
-- spec examples without BillingCurrency/ProviderName/BillingAccountId. One row per file x column.
{{ config(severity='warn', meta={'title': 'Mandatory FOCUS columns left empty', 'counts': 'file-columns', 'dagster': {'ref': {'name': 'int_billing_column_coverage'}}}) }}

select x_source_file, x_focus_version, column_name, x_rows, null_rows, null_share
from {{ ref('int_billing_column_coverage') }}
where not nulls_allowed and null_rows > 0
