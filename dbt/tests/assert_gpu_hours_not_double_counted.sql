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

-- The sums first; the jobs are listed for the hours that break a rule only: listing every hour's jobs kept
-- every GPU-hour's job names in a hash table (739 MiB of a 365-day fleet-256 history's full refresh).
over_key as (
    select gpu_key, hour_start, sum(allocated_gpu_hours) as allocated, max(gpu_capacity) as capacity
    from usage
    where gpu_capacity is not null
    group by gpu_key, hour_start
    having sum(allocated_gpu_hours) > max(gpu_capacity) + 1e-6
),

over_gpu as (
    select gpu_uuid, hour_start, sum(allocated_gpu_hours) as allocated
    from usage
    where gpu_uuid is not null
    group by gpu_uuid, hour_start
    having sum(allocated_gpu_hours) > 1.0 + 1e-6
),

per_key as (
    select over_key.gpu_key, over_key.hour_start, over_key.allocated, over_key.capacity,
           {{ sorted_distinct_join('coalesce(usage.job_id, usage.allocation_key)', ', ') }} as jobs
    from over_key
    inner join usage
        on usage.gpu_key is not distinct from over_key.gpu_key and usage.hour_start = over_key.hour_start
        and usage.gpu_capacity is not null
    group by over_key.gpu_key, over_key.hour_start, over_key.allocated, over_key.capacity
),

per_gpu as (
    select 'gpu:' || over_gpu.gpu_uuid as gpu_key, over_gpu.hour_start, over_gpu.allocated, 1.0 as capacity,
           {{ sorted_distinct_join('coalesce(usage.job_id, usage.allocation_key)', ', ') }} as jobs
    from over_gpu
    inner join usage on usage.gpu_uuid = over_gpu.gpu_uuid and usage.hour_start = over_gpu.hour_start
    group by over_gpu.gpu_uuid, over_gpu.hour_start, over_gpu.allocated
)

select * from per_key
union all
select * from per_gpu
