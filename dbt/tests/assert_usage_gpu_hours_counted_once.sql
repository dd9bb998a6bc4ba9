-- A GPU-hour is counted once. Every allocated scheduler/telemetry GPU-hour is on a bill line, on a
-- run record, or unbilled, and exactly one of them (int_gpu_usage_unbilled); only the unbilled hours
-- become GPU work (int_gpu_work_events) and rows of fct_off_bill_usage. Returns the days where the
-- partition or the hand-over does not add up.
-- Reads every day: int_gpu_usage_unbilled and fct_off_bill_usage carry no build stamp of their own, so
-- which of their days changed is not known here; it aggregates per day, a small part of the build.
{{ config(meta={'dagster': {'ref': {'name': 'fct_off_bill_usage'}}}) }}
with hourly as (
    select cast(hour_start as date) as day, sum(allocated_gpu_hours) as allocated_gpu_hours
    from {{ ref('int_gpu_usage_hourly') }}
    where allocated_gpu_hours > 0
    group by all
),

split as (
    select day,
           sum(allocated_gpu_hours) as allocated_gpu_hours,
           sum(bill_covered_gpu_hours + run_covered_gpu_hours + unbilled_gpu_hours) as partitioned_gpu_hours,
           sum(unbilled_gpu_hours) as unbilled_gpu_hours,
           count(*) filter (where bill_covered_gpu_hours < 0 or run_covered_gpu_hours < 0 or unbilled_gpu_hours < 0)
               as negative_rows
    from {{ ref('int_gpu_usage_unbilled') }}
    group by all
),

mart as (
    select day, sum(gpu_hours) as gpu_hours
    from {{ ref('fct_off_bill_usage') }}
    where source_kind in ('slurm_job', 'kubernetes_job', 'gpu_telemetry')
    group by all
),

compared as (
    select
        coalesce(hourly.day, split.day, mart.day) as day,
        coalesce(hourly.allocated_gpu_hours, 0) as hourly_gpu_hours,
        coalesce(split.allocated_gpu_hours, 0) as split_gpu_hours,
        coalesce(split.partitioned_gpu_hours, 0) as partitioned_gpu_hours,
        coalesce(split.unbilled_gpu_hours, 0) as unbilled_gpu_hours,
        coalesce(mart.gpu_hours, 0) as mart_gpu_hours,
        coalesce(split.negative_rows, 0) as negative_rows
    from hourly
    full outer join split on split.day = hourly.day
    full outer join mart on mart.day = coalesce(hourly.day, split.day)
)

select *
from compared
where abs(hourly_gpu_hours - split_gpu_hours) > 1e-6
   or abs(split_gpu_hours - partitioned_gpu_hours) > 1e-6
   or abs(unbilled_gpu_hours - mart_gpu_hours) > 1e-6
   or negative_rows > 0
