-- Catches one host's GPU-hour counted in two pools (docs/cost_model.md, "Physical GPUs"): in any hour, the
-- pools that give the host capacity (scontrol node hours, GPU bill lines on it) and the pools its jobs,
-- pods and telemetry are counted in must be one. Before, a node's telemetry pool sat beside its Slurm pool.
-- Reads the UTC days built since it last passed (macro days_built_since_last_pass; every day on a full
-- refresh or without a passing record): the days int_gpu_node_hours or int_gpu_usage_hourly rewrote
-- (x_built_at) and the days of GPU bill hours from files loaded since. Every rule reads one host-hour,
-- and every input that can add a pool to a host-hour rewrites that hour's day: a node's window reaching
-- a new day rebuilds that day's node hours, a new, late or restated job, pod, telemetry or bill file
-- rebuilds the usage days it touches. A nightly refresh reads the night's days, not the history.
{{ config(meta={'dagster': {'ref': {'name': 'int_gpu_node_hours'}}}) }}
{%- set scope = days_built_since_last_pass(
    [(ref('int_gpu_node_hours'), 'day', 'x_built_at'), (ref('int_gpu_usage_hourly'), 'usage_date', 'x_built_at')],
    [(ref('int_gpu_billing_hours_mapped'), 'hour_start', 'x_file_hash')]) %}
with pools as (
    select node_key as host_key, hour_start, pool_id from {{ ref('int_gpu_node_hours') }}
    where {{ in_plan('hour_start', scope) }}
    union all
    select {{ host_key("coalesce(resource_name, regexp_extract(resource_id, '([^/]*)$', 1))") }}, hour_start, pool_id
    from {{ ref('int_gpu_billing_hours_mapped') }}
    where coalesce(resource_name, resource_id) is not null and {{ in_plan('hour_start', scope) }}
    union all
    select host_key, hour_start, pool_id
    from {{ ref('int_gpu_usage_hourly') }}
    where host_key is not null and {{ in_plan('hour_start', scope) }}
)

select host_key, hour_start, {{ sorted_distinct_join('pool_id', ', ') }} as pools
from pools
group by host_key, hour_start
having count(distinct pool_id) > 1
