-- A GPU-hour is counted once. Every allocated scheduler/telemetry GPU-hour is on a bill line, on a
-- run record, or unbilled, and exactly one of them (int_gpu_usage_unbilled); only the unbilled hours
-- become GPU work (int_gpu_work_events) and rows of fct_off_bill_usage. Returns the days where the
-- partition or the hand-over does not add up.
-- Reads the UTC days built since it last passed (macro days_built_since_last_pass; every day on a full
-- refresh or without a passing record): the days int_gpu_usage_hourly or int_gpu_usage_unbilled rewrote
-- (x_built_at). Each rule compares one day across the chain, and a new, late or restated file (an earlier
-- day's usage counted twice) rewrites the usage days it touches, so a day neither model rewrote since the
-- pass holds the hours that passed. A nightly refresh reads the night's days, not the history.
{{ config(meta={'dagster': {'ref': {'name': 'fct_off_bill_usage'}}}) }}
{%- set scope = days_built_since_last_pass(
    [(ref('int_gpu_usage_hourly'), 'usage_date', 'x_built_at'), (ref('int_gpu_usage_unbilled'), 'day', 'x_built_at')]) %}
with hourly as (
    select cast(hour_start as date) as day, sum(allocated_gpu_hours) as allocated_gpu_hours
    from {{ ref('int_gpu_usage_hourly') }}
    where allocated_gpu_hours > 0 and {{ in_plan('hour_start', scope) }}
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
    where {{ in_plan('day', scope) }}
    group by all
),

mart as (
    select day, sum(gpu_hours) as gpu_hours
    from {{ ref('fct_off_bill_usage') }}
    where source_kind in ('slurm_job', 'kubernetes_job', 'gpu_telemetry') and {{ in_plan('day', scope) }}
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
