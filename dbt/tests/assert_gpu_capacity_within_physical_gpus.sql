-- Catches a physical GPU giving more than one GPU-hour per hour across all sources (docs/cost_model.md,
-- "Physical GPUs"): per host and hour, the capacity every source gives the host (scontrol node hours,
-- GPU bill lines on the host as resource, telemetry-seen GPUs of pools with no inventory and no bill)
-- adds up to more than the host's physical GPUs in dim_physical_gpu. A bill resource billed twice in
-- one hour, or a node counted by scontrol and by telemetry, shows up here.
-- Reads the UTC days built since it last passed, as assert_gpu_hour_in_one_pool does (macro
-- days_built_since_last_pass: days int_gpu_node_hours or int_gpu_usage_hourly rewrote, days of GPU bill
-- hours from files loaded since; every day on a full refresh or without a passing record): each sum is
-- of one host-hour, and every source that can add capacity to a host-hour rewrites that hour's day.
-- dim_physical_gpu (one row per GPU, small) is read whole. A restated file that takes GPUs away from a
-- host's count over all history (a telemetry index or a bill's GPUs per instance no other day has) is
-- checked against the rebuilt days only; a full refresh checks every day.
{{ config(meta={'dagster': {'ref': {'name': 'dim_physical_gpu'}}}) }}
{%- set scope = days_built_since_last_pass(
    [(ref('int_gpu_node_hours'), 'day', 'x_built_at'), (ref('int_gpu_usage_hourly'), 'usage_date', 'x_built_at')],
    [(ref('int_gpu_billing_hours_mapped'), 'hour_start', 'x_file_hash')]) %}
with gpus as (
    select {{ host_key('host') }} as host_key, count(*) as physical_gpus
    from {{ ref('dim_physical_gpu') }}
    where host is not null
    group by 1
),

bill as (
    select
        {{ host_key("coalesce(resource_name, regexp_extract(resource_id, '([^/]*)$', 1))") }} as host_key,
        hour_start, pool_id, billed_gpu_hours as gpu_hours
    from {{ ref('int_gpu_billing_hours_mapped') }}
    where coalesce(resource_name, resource_id) is not null and {{ in_plan('hour_start', scope) }}
),

capacity as (
    select node_key as host_key, hour_start, pool_id, cast(physical_gpus as double) as gpu_hours
    from {{ ref('int_gpu_node_hours') }}
    where {{ in_plan('hour_start', scope) }}
    union all
    select host_key, hour_start, pool_id, gpu_hours from bill
    union all
    select host_key, hour_start, pool_id, gpu_capacity
    from {{ ref('int_gpu_usage_hourly') }}
    where allocation_basis = 'telemetry' and host_key is not null and {{ in_plan('hour_start', scope) }}
      and pool_id not in (select pool_id from {{ ref('int_gpu_nodes') }})
      and pool_id not in (select pool_id from {{ ref('int_gpu_billing_hours_mapped') }})
),

per_host_hour as (
    select host_key, hour_start, sum(gpu_hours) as capacity_gpu_hours,
           {{ sorted_distinct_join('pool_id', ', ') }} as pools
    from capacity
    group by host_key, hour_start
)

select per_host_hour.*, gpus.physical_gpus
from per_host_hour
inner join gpus on gpus.host_key = per_host_hour.host_key
where per_host_hour.capacity_gpu_hours > gpus.physical_gpus + 1e-6
