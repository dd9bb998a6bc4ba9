-- Catches a physical GPU credited with more GPU-hours than hours it existed: dim_physical_gpu's
-- capacity_gpu_hours (what owned capacity is priced on) above the hours from first_hour to last_hour,
-- both hour starts, so the span is their difference + 1. One GPU gives at most one GPU-hour per hour
-- however many sources (scontrol, bill, telemetry) and slices describe it; the per-hour checks
-- (assert_gpu_capacity_within_physical_gpus, assert_gpu_hours_not_double_counted) count GPUs per host-hour
-- and never read this column. Each row names the GPU, its sources and the excess. One row per GPU (small):
-- read whole.
select
    physical_gpu_id,
    sources,
    first_hour,
    last_hour,
    capacity_gpu_hours,
    {{ hours_between('first_hour', 'last_hour') }} + 1 as hours_spanned
from {{ ref('dim_physical_gpu') }}
where capacity_gpu_hours > {{ hours_between('first_hour', 'last_hour') }} + 1 + 0.000001
