-- One row: x_history_key, a digest of what int_gpu_idle_hourly applies across all history. When it differs
-- from the key the model stored, every day of it is rebuilt (history_days); otherwise only the days whose
-- input stamps changed (macros/day_stamps.sql). Parts: registry files and the SQL and seeds upstream
-- (registry_and_code_key); the pools a rule reads over all history: the scontrol inventory's pools, the
-- pools of any GPU bill line (neither has telemetry capacity) and which of the bills' pools have any
-- usage record (a ledger pool without one is flagged so). Three narrow columns, a handful of values.
select md5(concat_ws('#', base.x_history_key, coalesce(pools.part, ''))) as x_history_key
from ({{ registry_and_code_key("model.gpu_ledger.int_gpu_idle_hourly") }}) as base
cross join (
    select {{ sorted_distinct_join('all_pools.pool', ',') }} as part
    from (
        select concat('node|', pool_id) as pool from {{ ref('int_gpu_nodes') }}
        union all
        select distinct concat('bill|', pool_id) from {{ ref('int_gpu_billing_hours_mapped') }}
        union all
        -- only a bill's pool is flagged for having no usage: a new telemetry-only host moves no day
        select distinct concat('usage|', pool_id) from {{ ref('int_gpu_usage_hourly') }}
        where pool_id in (select pool_id from {{ ref('int_gpu_billing_hours_mapped') }})
    ) as all_pools
) as pools
