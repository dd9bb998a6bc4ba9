-- The physical GPU inventory (docs/cost_model.md, "Physical GPUs"): one row per physical GPU seen by any
-- source, with the hours it existed in the data. Grain: physical_gpu_id.
--   scontrol  each node's physical GPUs (MIG devices folded to their GPU), indexes 0..n-1, every hour of
--             int_gpu_node_hours (the pool's observed days);
--   telemetry a DCGM / nvidia-smi GPU (UUID; MIG slices are its parts, not GPUs). On a scontrol node it is
--             that node's GPU of the same index: one row with both sources, not two;
--   bill      the GPUs of a GPU bill line's resource (instance x GPUs per instance), indexes 0..n-1, its
--             billed hours; a telemetry GPU on that host and index is the same row.
-- capacity_gpu_hours: the hours the GPU existed (scontrol: node hours; bill: billed GPU-hours per GPU;
-- telemetry only: hours it was seen). assert_physical_gpu_within_its_hours fails a GPU credited with more
-- GPU-hours than the hours from its first to its last.
with nodes as (
    select * from {{ ref('int_gpu_nodes') }}
),

node_hours as (
    select node_key, min(hour_start) as first_hour, max(hour_start) as last_hour, count(*) as hours
    from {{ ref('int_gpu_node_hours') }}
    group by node_key
),

scontrol_gpus as (
    select
        nodes.pool_id, nodes.node as host, nodes.node_key as host_key, nodes.gpu_model,
        {{ explode_list(int_series('0', 'cast(nodes.physical_gpus as bigint) - 1')) }} as gpu_index
    from nodes
    where nodes.physical_gpus >= 1
),

bill_lines as (
    select
        pool_id,
        coalesce(resource_name, regexp_extract(resource_id, '([^/]*)$', 1), 'line ' || x_charge_key) as host,
        gpu_model,
        gpu_count,
        hour_start,
        billed_gpu_hours
    from {{ ref('int_gpu_billing_hours_mapped') }}
    where gpu_count >= 1
),

bill_resources as (
    select
        min(pool_id) as pool_id,
        host,
        {{ host_key('host') }} as host_key,
        min(gpu_model) as gpu_model,
        max(gpu_count) as gpu_count,
        min(hour_start) as first_hour,
        max(hour_start) as last_hour,
        sum(billed_gpu_hours) / max(gpu_count) as hours
    from bill_lines
    group by host
),

bill_gpus as (
    select
        bill_resources.*,
        {{ explode_list(int_series('0', 'cast(bill_resources.gpu_count as bigint) - 1')) }} as gpu_index
    from bill_resources
),

-- Each UUID's hosts and indexes as written, first reduced to one row per (UUID, host, index): the host key
-- and the index's parse then run on a few rows per GPU, not on every telemetry hour of the history.
-- Each slot's hours count the one row of each GPU-hour (x_first_of_gpu_hour: whatever its MIG instances), so
-- a UUID's hours are the sum over its slots, each hour once, from the same scan.
telemetry_slots as (
    select gpu_uuid, host, gpu_index, min(hour_start) as first_hour, max(hour_start) as last_hour,
           count(*) filter (where x_first_of_gpu_hour) as hours
    from {{ ref('int_gpu_telemetry_hourly') }}
    group by gpu_uuid, host, gpu_index
),

telemetry_hours as (
    select gpu_uuid, cast(sum(hours) as bigint) as hours
    from telemetry_slots
    group by gpu_uuid
),

telemetry_uuids as (
    select
        telemetry_slots.gpu_uuid,
        min(coalesce(host_aliases.node_key, {{ host_key('telemetry_slots.host') }})) as host_key,
        min(telemetry_slots.host) as host,
        -- telemetry writes the index as text; a non-numeric one cannot name a node's GPU
        min(case when {{ regex_search('trim(telemetry_slots.gpu_index)', "'^[0-9]+$'") }}
                 then cast(trim(telemetry_slots.gpu_index) as bigint) end) as gpu_index,
        min(telemetry_slots.first_hour) as first_hour,
        max(telemetry_slots.last_hour) as last_hour,
        max(telemetry_hours.hours) as hours
    from telemetry_slots
    inner join telemetry_hours on telemetry_hours.gpu_uuid = telemetry_slots.gpu_uuid
    left join {{ ref('int_host_aliases') }} as host_aliases
        on host_aliases.alias_key = {{ host_key('telemetry_slots.host') }}
    group by telemetry_slots.gpu_uuid
),

-- One telemetry row per host and index (a replaced GPU in the same slot is the slot: its first UUID is
-- kept, its hours add up); a GPU without a host or an index stays its UUID.
telemetry as (
    select min(gpu_uuid) as gpu_uuid, host_key, min(host) as host, gpu_index, min(first_hour) as first_hour,
           max(last_hour) as last_hour, sum(hours) as hours
    from telemetry_uuids
    where host_key is not null and gpu_index is not null
    group by host_key, gpu_index
    union all
    select gpu_uuid, host_key, host, gpu_index, first_hour, last_hour, hours
    from telemetry_uuids
    where host_key is null or gpu_index is null
),

telemetry_pools as (
    select gpu_uuid, min(pool_id) as pool_id, min(gpu_model) as gpu_model
    from {{ ref('int_gpu_usage_hourly') }}
    where allocation_basis = 'telemetry'
    group by gpu_uuid
),

known as (
    select pool_id, host, host_key, gpu_index, gpu_model, 'scontrol' as source,
           node_hours.first_hour, node_hours.last_hour, cast(node_hours.hours as double) as hours
    from scontrol_gpus
    inner join node_hours on node_hours.node_key = scontrol_gpus.host_key
    union all
    select pool_id, host, host_key, gpu_index, gpu_model, 'bill', first_hour, last_hour, hours
    from bill_gpus
    -- a scontrol node that is a bill resource in some hours is one GPU: the bill's hours are left out of
    -- its node hours, so they add here
),

known_gpus as (
    select
        min(pool_id) as pool_id,
        min(host) as host,
        host_key,
        gpu_index,
        min(gpu_model) as gpu_model,
        {{ sorted_distinct_join('source', ', ') }} as sources,
        min(first_hour) as first_hour,
        max(last_hour) as last_hour,
        sum(hours) as hours
    from known
    group by host_key, gpu_index
),

merged as (
    select
        coalesce(known_gpus.pool_id, telemetry_pools.pool_id,
                 'telemetry:' || coalesce(telemetry.host, '(no host)')) as pool_id,
        coalesce(known_gpus.host, telemetry.host) as host,
        coalesce(known_gpus.gpu_index, telemetry.gpu_index) as gpu_index,
        telemetry.gpu_uuid,
        coalesce(known_gpus.gpu_model, telemetry_pools.gpu_model, '(unknown)') as gpu_model,
        concat_ws(', ', known_gpus.sources, case when telemetry.gpu_uuid is not null then 'telemetry' end) as sources,
        case when known_gpus.host_key is null then telemetry.first_hour
             when telemetry.gpu_uuid is null then known_gpus.first_hour
             else least(known_gpus.first_hour, telemetry.first_hour) end as first_hour,
        case when known_gpus.host_key is null then telemetry.last_hour
             when telemetry.gpu_uuid is null then known_gpus.last_hour
             else greatest(known_gpus.last_hour, telemetry.last_hour) end as last_hour,
        coalesce(known_gpus.hours, telemetry.hours) as capacity_gpu_hours
    from known_gpus
    full outer join telemetry
        on telemetry.host_key = known_gpus.host_key and telemetry.gpu_index = known_gpus.gpu_index
    left join telemetry_pools on telemetry_pools.gpu_uuid = telemetry.gpu_uuid
),

pool_sites as (
    select * from {{ ref('int_gpu_pool_sites') }}
),

final as (
    select
        -- pool|host|index (the same GPU whichever sources saw it), else pool|host|UUID
        md5(merged.pool_id || '|' || coalesce(merged.host, '(no host)') || '|'
            || case when merged.host is not null and merged.gpu_index is not null
                    then cast(merged.gpu_index as string) else coalesce(merged.gpu_uuid, '') end) as physical_gpu_id,
        merged.pool_id,
        pool_sites.site,
        coalesce(pool_sites.is_owned, false) as is_owned,
        merged.host,
        merged.gpu_index,
        merged.gpu_uuid,
        merged.gpu_model,
        merged.sources,
        merged.first_hour,
        merged.last_hour,
        cast(round(merged.capacity_gpu_hours, 9) as decimal(38, 9)) as capacity_gpu_hours
    from merged
    left join pool_sites on pool_sites.pool_id = merged.pool_id
)

select * from final
