-- Catches (warning): bill lines without EffectiveCost (FOCUS requires it; a file may lack the column or
-- leave a value empty). stg_focus__charges amortises them at their billed cost, which is exact for
-- on-demand lines and misstates commitment purchases and the usage they cover: listed here, per line.
-- The raw lines, where the empty value is still visible; the check belongs to the model that fills it.
-- depends_on: {{ ref('stg_focus__charges') }}
{{ config(severity='warn', meta={'title': 'Bill lines amortised at their billed cost (no EffectiveCost)', 'counts': 'bill lines', 'dagster': {'ref': {'name': 'stg_focus__charges'}}}) }}

select _source_file as x_source_file, _source_line as x_source_line, ProviderName, ChargeCategory, BilledCost
from {{ source('billing', 'billing_charges') }}
where EffectiveCost is null and BilledCost is not null
