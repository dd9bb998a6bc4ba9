-- Catches one host's GPU-hour counted in two pools (docs/cost_model.md, "Physical GPUs"): in any hour, the
-- pools that give the host capacity (scontrol node hours, GPU bill lines on it) and the pools its jobs,
-- pods and telemetry are counted in must be one. Before, a node's telemetry pool sat beside its Slurm pool.
-- Reads every day, not only the usage days built since it last passed (macro built_since_last_pass): a
-- node's hours (int_gpu_node_hours, rebuilt whole) reach every day its pool was observed between, so a
-- new day of jobs adds node hours to earlier days whose usage no build touched.
{{ config(meta={'dagster': {'ref': {'name': 'int_gpu_node_hours'}}}) }}
with pools as (
    select node_key as host_key, hour_start, pool_id from {{ ref('int_gpu_node_hours') }}
    union all
    select {{ host_key("coalesce(resource_name, regexp_extract(resource_id, '([^/]*)$', 1))") }}, hour_start, pool_id
    from {{ ref('int_gpu_billing_hours_mapped') }}
    where coalesce(resource_name, resource_id) is not null
    union all
    select host_key, hour_start, pool_id
    from {{ ref('int_gpu_usage_hourly') }}
    where host_key is not null
)

select host_key, hour_start, {{ sorted_distinct_join('pool_id', ', ') }} as pools
from pools
group by host_key, hour_start
having count(distinct pool_id) > 1
