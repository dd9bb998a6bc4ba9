-- Warns where billed and used GPU-hours of a team, workload, GPU model and day both exist but differ by
-- more than var('gpu_hours_tolerance') (default 0.5) of the billed hours: paid-for GPUs mostly unused,
-- or usage that the bill does not cover.
{{ config(severity='warn', meta={'title': 'Billed and used GPU-hours differ beyond tolerance', 'counts': 'team-workload-GPU-days'}) }}
select *
from {{ ref('fct_gpu_utilisation_daily') }}
where billed_gpu_hours > 0
  and used_gpu_hours > 0
  and abs(billed_gpu_hours - used_gpu_hours) > {{ var('gpu_hours_tolerance', 0.5) }} * billed_gpu_hours
