{{ config(
    materialized='incremental',
    incremental_strategy=gpu_ledger.day_incremental_strategy(),
    partition_by=gpu_ledger.day_partition_by('day'),
    unique_key='day',
    on_schema_change='append_new_columns',
    pre_hook=[
        {"sql": "{{ gpu_ledger.clear_when_history_changed(ref('int_gpu_node_hours_history_key'), [('x_day_digest', 'string'), ('x_built_at', 'timestamp')]) }}", "transaction": false},
        {"sql": "{{ gpu_ledger.clear_days('day', gpu_ledger.node_hours_changed_days()) }}", "transaction": false}
    ]
) }}
-- Every hour each scontrol node existed, with its physical GPUs (docs/cost_model.md, "Physical GPUs").
-- Grain: node_key x hour_start. A listed node exists every hour of every UTC day from the first to the
-- last day its pool was observed (a job running on the pool, or telemetry on one of its nodes), never
-- only the hours between its first and last job. An hour the node is a GPU bill line's resource is the
-- bill's capacity (the fleet identity), so it is left out here: a GPU-hour is one capacity.
-- Incremental by UTC day (macros/incremental_days.sql, macros/node_hours.sql): a day's rows are the nodes
-- of the pools whose window covers it, less the hours they are a bill's resource. A run rebuilds the days
-- whose digest of those (x_day_digest) is not the stored one: a new day that extends a pool's window
-- (and the days between its old last day and the new one), a restated file that moves a window's end or
-- a node's bill hours; a day no window covers any more is deleted (pre-hook clear_days). Plus the
-- backfill window. The nodes themselves and the SQL and seeds upstream are int_gpu_node_hours_history_key:
-- when it changes, every day is rebuilt. The windows are read from every job and telemetry host each run
-- (two columns aggregated); a day's hours are expanded only when the day is rebuilt.
{%- if is_incremental() %}
    {%- set plan = history_days(gpu_ledger.node_hours_changed_days(), ref('int_gpu_node_hours_history_key')) %}
{%- else %}
    {%- set plan = {'all': true, 'days': []} %}
{%- endif %}
with nodes as (
    select * from {{ ref('int_gpu_nodes') }}
),

pool_windows as (
    {{ node_pool_windows() }}
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
    where {{ overlaps_plan('pool_windows.first_hour', 'pool_windows.last_hour + interval 1 hour', plan) }}
),

bill_hours as (
    {{ node_bill_hours(plan) }}
),

day_digests as (
    {{ interval_day_digests(node_hours_day_lines(), plan) }}
),

final as (
    select
        node_hours.*,
        cast(node_hours.hour_start as date) as day,
        day_digests.digest as x_day_digest,
        {{ latest_file_load() }} as x_loaded_at,
        cast({{ dbt.current_timestamp() }} as timestamp) as x_built_at,
        (select max(x_history_key) from {{ ref('int_gpu_node_hours_history_key') }}) as x_history_key
    from node_hours
    left join bill_hours
        on bill_hours.hour_start = node_hours.hour_start and bill_hours.node_key = node_hours.node_key
    left join day_digests on day_digests.day = cast(node_hours.hour_start as date)
    where bill_hours.node_key is null and {{ in_plan('node_hours.hour_start', plan) }}
)

select * from final
