-- Loud gap, reported as a warning: GPU-hours that no bill line, list price or owned-hardware rate
-- prices (fct_unpriced_usage rows with pricing_status 'unpriced'), with their reason.
{{ config(severity='warn', meta={'title': 'GPU-hours nobody could price', 'counts': 'reasons'}) }}

select day, source_kind, team_id, workload_id, gpu_model, site, reason, gpu_hours
from {{ ref('fct_unpriced_usage') }}
where pricing_status = 'unpriced'
