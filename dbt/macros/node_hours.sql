{#- What a day of int_gpu_node_hours is built from, beside the scontrol nodes (history-wide:
   int_gpu_node_hours_history_key):
   node_pool_windows(): per scontrol pool, the first and last hour of the UTC days from the first to the
     last day the pool was observed (a Slurm job with GPUs on its cluster, or telemetry on one of its
     nodes). Aggregated per cluster and per telemetry host before the node join: the window reads two
     columns of each input, not its rows joined.
   node_bill_hours(): the hours a scontrol node is a GPU bill line's resource (the bill is its capacity
     then), as (node_key, hour_start).
   node_hours_day_lines(): both as lines for interval_day_digests (macros/incremental_days.sql): a day's
     digest changes exactly when the pools whose window covers it, or the bill hours of its nodes, do. -#}
{% macro node_pool_windows() -%}
    select
        activity.pool_id,
        cast(cast(min(activity.first_at) as date) as timestamp) as first_hour,
        -- a job ending exactly at midnight does not open the next day
        cast(cast(max(activity.last_at) - interval 1 microsecond as date) as timestamp) + interval 23 hour as last_hour
    from (
        select 'slurm:' || cluster as pool_id, min(started_at) as first_at, max(ended_at_effective) as last_at
        from {{ ref('int_gpu_jobs_attributed') }}
        where scheduler = 'slurm' and has_gpus and started_at is not null and ended_at_effective > started_at
        group by cluster
        union all
        select nodes.pool_id, telemetry_hosts.first_at, telemetry_hosts.last_at
        from (
            select host, min(hour_start) as first_at, max(hour_start) as last_at
            from {{ ref('int_gpu_telemetry_hourly') }}
            group by host
        ) as telemetry_hosts
        left join {{ ref('int_host_aliases') }} as host_aliases
            on host_aliases.alias_key = {{ gpu_ledger.host_key('telemetry_hosts.host') }}
        inner join {{ ref('int_gpu_nodes') }} as nodes
            on nodes.node_key = coalesce(host_aliases.node_key, {{ gpu_ledger.host_key('telemetry_hosts.host') }})
    ) as activity
    where activity.pool_id in (select pool_id from {{ ref('int_gpu_nodes') }})
    group by activity.pool_id
{%- endmacro %}

{#- The bill lines are first narrowed to those naming a node (by any of bill_host_keys' keys): most are
    cloud instances, and the keys of every line would be expanded and deduplicated for none. -#}
{% macro node_bill_hours(plan) -%}
    {%- set node_keys = "(select node_key from " ~ ref('int_gpu_nodes') ~ ")" -%}
    select distinct bill_keys.hour_start, bill_keys.host_key as node_key
    from ({{ gpu_ledger.bill_host_keys(
        "(select hour_start, lower(resource_id) as resource_id, lower(resource_name) as resource_name from "
        ~ ref('int_gpu_billing_hours_mapped') ~ " where " ~ gpu_ledger.in_plan('hour_start', plan)
        ~ " and (lower(resource_name) in " ~ node_keys ~ " or lower(resource_id) in " ~ node_keys
        ~ " or regexp_extract(lower(resource_id), '/([^/]*)$', 1) in " ~ node_keys ~ ")) as bill_hosts",
        ['hour_start']) }}) as bill_keys
    inner join {{ ref('int_gpu_nodes') }} as nodes on nodes.node_key = bill_keys.host_key
{%- endmacro %}

{% macro node_hours_day_lines() -%}
    select 'pool|' || windows.pool_id as line, windows.first_hour as start_at,
           windows.last_hour + interval 1 hour as end_at
    from ({{ gpu_ledger.node_pool_windows() }}) as windows
    union all
    select 'bill|' || bill.node_key || '|' || cast(bill.hour_start as string), bill.hour_start,
           bill.hour_start + interval 1 hour
    from ({{ gpu_ledger.node_bill_hours({'all': true, 'days': []}) }}) as bill
{%- endmacro %}

{#- The days an incremental run of int_gpu_node_hours rebuilds besides the backfill window: those whose
   digest differs from the stored x_day_digest. -#}
{% macro node_hours_changed_days() -%}
    {{ gpu_ledger.days_with_changed_digest(gpu_ledger.node_hours_day_lines(), 'day', 'x_day_digest') }}
{%- endmacro %}
