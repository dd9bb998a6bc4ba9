{{ config(
    materialized='incremental',
    incremental_strategy=gpu_ledger.day_incremental_strategy(),
    partition_by=gpu_ledger.day_partition_by('day'),
    unique_key='day',
    on_schema_change='append_new_columns',
    pre_hook=[
        {"sql": "{{ gpu_ledger.clear_when_history_changed(ref('int_gpu_idle_hourly_history_key'), [('x_inputs_digest', 'string'), ('x_built_at', 'timestamp')]) }}", "transaction": false},
        {"sql": "{{ gpu_ledger.clear_days('day', gpu_ledger.idle_hourly_changed_days()) }}", "transaction": false}
    ]
) }}
-- Idle GPU-hours per pool (Slurm cluster, cloud account, Kubernetes cluster, or the hosts seen only in
-- telemetry), GPU model and hour. Billed (the capacity) = the ledger's GPU-hours for cloud accounts; for a
-- Slurm cluster with scontrol nodes, each node's physical GPUs in every hour of every UTC day from the
-- first to the last day the pool has a job or a telemetry sample on its nodes (a listed node exists all
-- day: never only the hours between jobs), except hours the node is a GPU bill line's resource (the bill
-- is its capacity then); for other pools the GPUs telemetry saw in the hour. Usage on a bill line's host
-- is in the bill's pool (the fleet identity, int_gpu_usage_hourly), so a GPU is one capacity, never a
-- ledger pool and a telemetry pool.
-- Idle has two kinds, and missing readings are buckets of their own (never idle, never busy):
--   unallocated_gpu_hours = billed - allocated (billed, no job, pod or serving process);
--   underused_gpu_hours   = measured - used = allocated x (1 - activity), on allocated hours with a reading;
--   unmeasured_gpu_hours  = allocated - measured (allocated, no utilisation reading);
--   unobserved_gpu_hours  = billed hours of a ledger pool with no usage record at all in the hour (no
--                           collector): neither unallocated nor busy.
-- billed = unallocated + unobserved + allocated - over_allocation. Never negative: allocation above
-- billed/capacity is shown as over_allocation_gpu_hours with a cause in idle_flag. Hours are DECIMAL(38, 9).
-- Incremental by UTC day (day = the hour's date; macros/day_stamps.sql): every rule joins rows of one hour,
-- except which pools are the inventory's, a bill's or have usage at all (history-wide, with the registry
-- files and the SQL upstream: int_gpu_idle_hourly_history_key; when it changes every day is rebuilt). A
-- run rebuilds the days whose input stamps changed: the days int_gpu_usage_hourly or int_gpu_node_hours
-- rebuilt, the days a GPU bill file gives hours to or took hours from; a day no input holds any more is
-- deleted (pre-hook clear_days). Plus the backfill window.
{%- if is_incremental() %}
    {%- set plan = history_days(gpu_ledger.idle_hourly_changed_days(), ref('int_gpu_idle_hourly_history_key')) %}
{%- else %}
    {%- set plan = {'all': true, 'days': []} %}
{%- endif %}
with usage as (
    select * from {{ ref('int_gpu_usage_hourly') }}
    where {{ in_plan('hour_start', plan) }}
),

billing as (
    select * from {{ ref('int_gpu_billing_hours_mapped') }}
    where {{ in_plan('hour_start', plan) }}
),

-- history-wide: a pool on any bill line has no telemetry capacity on any day
billing_pools as (
    select distinct pool_id from {{ ref('int_gpu_billing_hours_mapped') }}
),

nodes as (
    select * from {{ ref('int_gpu_nodes') }}
),


usage_hourly as (
    select
        pool_id,
        coalesce(gpu_model, '(unknown)') as gpu_model,
        hour_start,
        sum(allocated_gpu_hours) as allocated_gpu_hours,
        sum(used_gpu_hours) as used_gpu_hours,
        sum(measured_gpu_hours) as measured_gpu_hours,
        sum(gpu_capacity) filter (where allocation_basis = 'telemetry') as observed_gpus
    from usage
    group by all
),

inventory_hours as (
    select pool_id, gpu_model, hour_start, sum(physical_gpus) as billed_gpu_hours, 'inventory' as capacity_basis
    from {{ ref('int_gpu_node_hours') }}
    where {{ in_plan('hour_start', plan) }}
    group by pool_id, gpu_model, hour_start
),

ledger_hours as (
    select pool_id, gpu_model, hour_start, sum(billed_gpu_hours) as billed_gpu_hours, 'ledger' as capacity_basis
    from billing
    group by all
),

-- Pools with no inventory and no bill line: the GPUs telemetry saw in the hour (a pod pool whose hosts
-- carry telemetry, or hosts seen only in telemetry).
telemetry_hours as (
    select pool_id, gpu_model, hour_start, observed_gpus as billed_gpu_hours, 'telemetry' as capacity_basis
    from usage_hourly
    where observed_gpus is not null
      and pool_id not in (select pool_id from nodes)
      and pool_id not in (select pool_id from billing_pools)
),

capacity as (
    {{ union_all_columns(['inventory_hours', 'ledger_hours', 'telemetry_hours'],
                         ['pool_id', 'gpu_model', 'hour_start', 'billed_gpu_hours', 'capacity_basis']) }}
),

-- history-wide: a ledger pool with no usage record on any day is flagged so
pools_with_usage as (
    select distinct pool_id from {{ ref('int_gpu_usage_hourly') }}
),

day_digests as (
    {{ month_stamp_digests(idle_hourly_stamps(), 'day') }}
),

joined as (
    select
        coalesce(capacity.pool_id, usage_hourly.pool_id) as pool_id,
        coalesce(capacity.gpu_model, usage_hourly.gpu_model) as gpu_model,
        coalesce(capacity.hour_start, usage_hourly.hour_start) as hour_start,
        coalesce(capacity.capacity_basis, 'none') as capacity_basis,
        cast(round(coalesce(capacity.billed_gpu_hours, 0), 9) as decimal(38, 9)) as billed_gpu_hours,
        coalesce(usage_hourly.allocated_gpu_hours, 0) as allocated_gpu_hours,
        coalesce(usage_hourly.used_gpu_hours, 0) as used_gpu_hours,
        coalesce(usage_hourly.measured_gpu_hours, 0) as measured_gpu_hours,
        usage_hourly.pool_id is not null as has_usage
    from capacity
    full outer join usage_hourly
        on usage_hourly.pool_id = capacity.pool_id
        and usage_hourly.gpu_model = capacity.gpu_model
        and usage_hourly.hour_start = capacity.hour_start
),

classified as (
    select
        joined.*,
        case when joined.capacity_basis = 'ledger' and not joined.has_usage
             then joined.billed_gpu_hours else cast(0 as decimal(38, 9)) end as unobserved_gpu_hours,
        case when joined.capacity_basis = 'ledger' and not joined.has_usage then cast(0 as decimal(38, 9))
             else greatest(joined.billed_gpu_hours - joined.allocated_gpu_hours, 0) end as unallocated_gpu_hours,
        greatest(joined.measured_gpu_hours - joined.used_gpu_hours, 0) as underused_gpu_hours,
        greatest(joined.allocated_gpu_hours - joined.measured_gpu_hours, 0) as unmeasured_gpu_hours
    from joined
),

final as (
    select
        classified.pool_id,
        classified.gpu_model,
        classified.hour_start,
        classified.capacity_basis,
        classified.billed_gpu_hours,
        classified.allocated_gpu_hours,
        classified.used_gpu_hours,
        classified.measured_gpu_hours,
        classified.unallocated_gpu_hours,
        classified.underused_gpu_hours,
        classified.unmeasured_gpu_hours,
        classified.unobserved_gpu_hours,
        -- The names before the split (kept for readers): unallocated idle and allocated (underused) idle.
        classified.unallocated_gpu_hours as unallocated_idle_gpu_hours,
        classified.underused_gpu_hours as allocated_idle_gpu_hours,
        classified.unallocated_gpu_hours + classified.underused_gpu_hours as idle_gpu_hours,
        -- Slices stored at 9 decimals (1/7 of a GPU) can sum a few 1e-9 above a full GPU: not an over-allocation.
        case when classified.allocated_gpu_hours > classified.billed_gpu_hours + 0.000001
             then classified.allocated_gpu_hours - classified.billed_gpu_hours
             else cast(0 as decimal(38, 9)) end as over_allocation_gpu_hours,
        case
            when classified.allocated_gpu_hours > classified.billed_gpu_hours + 0.000001
                 and classified.capacity_basis = 'none'
                then 'allocated without a capacity record'
            when classified.allocated_gpu_hours > classified.billed_gpu_hours + 0.000001
                then 'allocated exceeds capacity'
            when classified.capacity_basis = 'ledger' and pools_with_usage.pool_id is null
                then 'no usage data for the pool'
            when classified.capacity_basis = 'ledger' and not classified.has_usage
                then 'no usage data in the hour'
        end as idle_flag
    from classified
    left join pools_with_usage on pools_with_usage.pool_id = classified.pool_id
)

select
    final.*,
    cast(final.hour_start as date) as day,
    day_digests.digest as x_inputs_digest,
    {{ latest_file_load() }} as x_loaded_at,
    cast({{ dbt.current_timestamp() }} as timestamp) as x_built_at,
    (select max(x_history_key) from {{ ref('int_gpu_idle_hourly_history_key') }}) as x_history_key
from final
left join day_digests on day_digests.day = cast(final.hour_start as date)
