-- Catches one GPU-hour counted twice (over-allocation): the allocations of one GPU key (a GPU, a MIG
-- slice, or a node's GPUs) in one hour add up to more than the physical GPUs it stands for (MIG slices
-- and shared-GPU pods count their fraction), or the MIG slices of one physical GPU add up to more than
-- one GPU. Each failing row names the GPU key, the hour and the jobs.
-- Reads the days built since this check last passed (macro built_since_last_pass; every day on a full
-- refresh or without a passing record): every rule here sums rows of one GPU key and hour, all on one
-- day, and the model rewrites a day whole with a new stamp, so a day no build touched since the pass is
-- the one that passed. A nightly refresh reads the night's days, not the history.
with usage as (
    select * from {{ ref('int_gpu_usage_hourly') }}
    where {{ built_since_last_pass() }}
),

per_key as (
    select gpu_key, hour_start, sum(allocated_gpu_hours) as allocated, max(gpu_capacity) as capacity,
           {{ sorted_distinct_join('coalesce(job_id, allocation_key)', ', ') }} as jobs
    from usage
    where gpu_capacity is not null
    group by all
    having sum(allocated_gpu_hours) > max(gpu_capacity) + 1e-6
),

per_gpu as (
    select 'gpu:' || gpu_uuid as gpu_key, hour_start, sum(allocated_gpu_hours) as allocated, 1.0 as capacity,
           {{ sorted_distinct_join('coalesce(job_id, allocation_key)', ', ') }} as jobs
    from usage
    where gpu_uuid is not null
    group by all
    having sum(allocated_gpu_hours) > 1.0 + 1e-6
)

select * from per_key
union all
select * from per_gpu
