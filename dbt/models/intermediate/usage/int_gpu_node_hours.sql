-- Every hour each scontrol node existed, with its physical GPUs (docs/cost_model.md, "Physical GPUs").
-- Grain: node_key x hour_start. A listed node exists every hour of every UTC day from the first to the
-- last day its pool was observed (a job running on the pool, or telemetry on one of its nodes), never
-- only the hours between its first and last job. An hour the node is a GPU bill line's resource is the
-- bill's capacity (the fleet identity), so it is left out here: a GPU-hour is one capacity.
with nodes as (
    select * from {{ ref('int_gpu_nodes') }}
),

jobs as (
    select * from {{ ref('int_gpu_jobs_attributed') }}
    where scheduler = 'slurm' and has_gpus and started_at is not null and ended_at_effective > started_at
),

telemetry_hourly as (
    select host, hour_start from {{ ref('int_gpu_telemetry_hourly') }}
),

bill_hosts as (
    select hour_start, lower(resource_id) as resource_id, lower(resource_name) as resource_name
    from {{ ref('int_gpu_billing_hours_mapped') }}
),

bill_host_keys as (
    {{ bill_host_keys('bill_hosts', ['hour_start']) }}
),

pool_activity as (
    select 'slurm:' || cluster as pool_id, started_at as first_at, ended_at_effective as last_at
    from jobs
    union all
    select nodes.pool_id, telemetry_hourly.hour_start, telemetry_hourly.hour_start
    from telemetry_hourly
    left join {{ ref('int_host_aliases') }} as host_aliases
        on host_aliases.alias_key = {{ host_key('telemetry_hourly.host') }}
    inner join nodes on nodes.node_key = coalesce(host_aliases.node_key, {{ host_key('telemetry_hourly.host') }})
),

pool_windows as (
    select
        pool_id,
        cast(cast(min(first_at) as date) as timestamp) as first_hour,
        -- a job ending exactly at midnight does not open the next day
        cast(cast(max(last_at) - interval 1 microsecond as date) as timestamp) + interval 23 hour as last_hour
    from pool_activity
    where pool_id in (select pool_id from nodes)
    group by pool_id
),

node_hours as (
    select
        nodes.node,
        nodes.node_key,
        nodes.pool_id,
        nodes.cluster,
        nodes.gpu_model,
        nodes.physical_gpus,
        {{ explode_list(hour_series('pool_windows.first_hour', 'pool_windows.last_hour')) }} as hour_start
    from nodes
    inner join pool_windows on pool_windows.pool_id = nodes.pool_id
),

final as (
    select node_hours.*
    from node_hours
    left join bill_host_keys
        on bill_host_keys.hour_start = node_hours.hour_start and bill_host_keys.host_key = node_hours.node_key
    where bill_host_keys.host_key is null
)

select * from final
