{{ config(
    materialized='incremental',
    incremental_strategy=gpu_ledger.day_incremental_strategy(),
    partition_by=gpu_ledger.day_partition_by('day'),
    unique_key='day',
    on_schema_change='append_new_columns',
    pre_hook=[{"sql": "{{ gpu_ledger.clear_days('day', gpu_ledger.utilisation_changed_days()) }}", "transaction": false}]
) }}
-- GPU-hours per day, team, workload and GPU model: billed, allocated, used, idle (unallocated and
-- underused), missing readings (unmeasured, unobserved), failed. One fleet: usage on a GPU bill line's
-- host is in the bill's pool (int_gpu_usage_hourly), so its billed hours are the bill's, counted once.
-- Hours are DECIMAL(38, 9): the same inputs publish the same digits whatever the summation order.
-- Billed per team: cloud accounts from the ledger lines' own team; Slurm clusters and telemetry hosts
-- (capacity, not invoices) give each team the capacity it held (its allocation, scaled down when the
-- pool was over-allocated) and the rest to '(unallocated)'. Idle per team = its allocated idle
-- (measured - used) plus its share of the pool's unallocated idle (cloud: in proportion to billed
-- hours; capacity pools: all on '(unallocated)'). Summed over teams, billed and idle equal the pool's.
-- fct_gpu_utilisation_daily publishes these rows without the build columns x_inputs_digest, x_built_at.
-- Incremental by UTC day: every rule above joins rows of one hour of the three inputs, so a day's rows
-- depend on that day's input rows alone. Each row stores its day's input digest (macros/utilisation_days.sql:
-- usage days by their build stamp, idle and billed hours by a hash of their rows, this model's code); a run
-- rebuilds the days whose digest moved (new, changed or restated input days) and deletes the days no input
-- holds any more, without reading the history's usage rows.
{%- if is_incremental() %}
    {%- set plan = {'all': false, 'days': incremental_days(gpu_ledger.utilisation_changed_days())} %}
{%- else %}
    {%- set plan = {'all': true, 'days': []} %}
{%- endif %}
with usage as (
    select * from {{ ref('int_gpu_usage_hourly') }}
    where {{ in_plan('hour_start', plan) }}
),

idle as (
    select * from {{ ref('int_gpu_idle_hourly') }}
    where {{ in_plan('hour_start', plan) }}
),

billing as (
    select * from {{ ref('int_gpu_billing_hours_mapped') }}
    where {{ in_plan('hour_start', plan) }}
),

input_digests as (
    {{ gpu_ledger.utilisation_day_digests(plan) }}
),

usage_team_hours as (
    select
        pool_id,
        coalesce(gpu_model, '(unknown)') as gpu_model,
        hour_start,
        team_id,
        workload_id,
        sum(allocated_gpu_hours) as allocated_gpu_hours,
        sum(used_gpu_hours) as used_gpu_hours,
        sum(measured_gpu_hours) as measured_gpu_hours,
        sum(allocated_gpu_hours) filter (where outcome = 'failed') as failed_job_gpu_hours,
        sum(allocated_gpu_hours) filter (where outcome = 'cancelled') as cancelled_job_gpu_hours
    from usage
    group by all
),

usage_rows as (
    select
        usage_team_hours.hour_start,
        usage_team_hours.team_id,
        usage_team_hours.workload_id,
        usage_team_hours.gpu_model,
        case when idle.capacity_basis in ('inventory', 'telemetry')
             then cast(round(usage_team_hours.allocated_gpu_hours
                  * least(1.0, idle.billed_gpu_hours / nullif(idle.allocated_gpu_hours, 0)), 9) as decimal(38, 9))
             else cast(0 as decimal(38, 9)) end as billed_gpu_hours,
        usage_team_hours.allocated_gpu_hours,
        usage_team_hours.used_gpu_hours,
        usage_team_hours.measured_gpu_hours,
        cast(0 as decimal(38, 9)) as unallocated_gpu_hours,
        greatest(usage_team_hours.measured_gpu_hours - usage_team_hours.used_gpu_hours, 0) as underused_gpu_hours,
        greatest(usage_team_hours.allocated_gpu_hours - usage_team_hours.measured_gpu_hours, 0) as unmeasured_gpu_hours,
        cast(0 as decimal(38, 9)) as unobserved_gpu_hours,
        coalesce(usage_team_hours.failed_job_gpu_hours, 0.0) as failed_job_gpu_hours,
        coalesce(usage_team_hours.cancelled_job_gpu_hours, 0.0) as cancelled_job_gpu_hours
    from usage_team_hours
    left join idle
        on idle.pool_id = usage_team_hours.pool_id
        and idle.gpu_model = usage_team_hours.gpu_model
        and idle.hour_start = usage_team_hours.hour_start
),

ledger_rows as (
    select
        billing.hour_start,
        billing.team_id,
        billing.workload_id,
        billing.gpu_model,
        cast(round(billing.billed_gpu_hours, 9) as decimal(38, 9)) as billed_gpu_hours,
        0 as allocated_gpu_hours,
        0 as used_gpu_hours,
        0 as measured_gpu_hours,
        cast(round(idle.unallocated_gpu_hours * billing.billed_gpu_hours / nullif(idle.billed_gpu_hours, 0), 9)
             as decimal(38, 9)) as unallocated_gpu_hours,
        0 as underused_gpu_hours,
        0 as unmeasured_gpu_hours,
        cast(round(idle.unobserved_gpu_hours * billing.billed_gpu_hours / nullif(idle.billed_gpu_hours, 0), 9)
             as decimal(38, 9)) as unobserved_gpu_hours,
        0 as failed_job_gpu_hours,
        0 as cancelled_job_gpu_hours
    from billing
    inner join idle
        on idle.pool_id = billing.pool_id
        and idle.gpu_model = billing.gpu_model
        and idle.hour_start = billing.hour_start
),

capacity_rows as (
    select
        hour_start,
        '(unallocated)' as team_id,
        cast(null as string) as workload_id,
        gpu_model,
        unallocated_gpu_hours as billed_gpu_hours,
        0 as allocated_gpu_hours,
        0 as used_gpu_hours,
        0 as measured_gpu_hours,
        unallocated_gpu_hours,
        0 as underused_gpu_hours,
        0 as unmeasured_gpu_hours,
        0 as unobserved_gpu_hours,
        0 as failed_job_gpu_hours,
        0 as cancelled_job_gpu_hours
    from idle
    where capacity_basis in ('inventory', 'telemetry') and unallocated_gpu_hours > 0
),

unioned as (
    {{ union_all_columns(['usage_rows', 'ledger_rows', 'capacity_rows'], [
        'hour_start', 'team_id', 'workload_id', 'gpu_model', 'billed_gpu_hours', 'allocated_gpu_hours',
        'used_gpu_hours', 'measured_gpu_hours', 'unallocated_gpu_hours', 'underused_gpu_hours', 'unmeasured_gpu_hours',
        'unobserved_gpu_hours', 'failed_job_gpu_hours', 'cancelled_job_gpu_hours']) }}
),

final as (
    select
        cast(hour_start as date) as day,
        team_id,
        workload_id,
        gpu_model,
        cast(sum(cast(billed_gpu_hours as decimal(38, 9))) as decimal(38, 9)) as billed_gpu_hours,
        cast(sum(cast(allocated_gpu_hours as decimal(38, 9))) as decimal(38, 9)) as allocated_gpu_hours,
        cast(sum(cast(used_gpu_hours as decimal(38, 9))) as decimal(38, 9)) as used_gpu_hours,
        cast(sum(cast(measured_gpu_hours as decimal(38, 9))) as decimal(38, 9)) as measured_gpu_hours,
        cast(sum(cast(coalesce(unallocated_gpu_hours, 0) + underused_gpu_hours as decimal(38, 9))) as decimal(38, 9)) as idle_gpu_hours,
        cast(sum(cast(coalesce(unallocated_gpu_hours, 0) as decimal(38, 9))) as decimal(38, 9)) as unallocated_gpu_hours,
        cast(sum(cast(underused_gpu_hours as decimal(38, 9))) as decimal(38, 9)) as underused_gpu_hours,
        cast(sum(cast(unmeasured_gpu_hours as decimal(38, 9))) as decimal(38, 9)) as unmeasured_gpu_hours,
        cast(sum(cast(coalesce(unobserved_gpu_hours, 0) as decimal(38, 9))) as decimal(38, 9)) as unobserved_gpu_hours,
        cast(sum(cast(failed_job_gpu_hours as decimal(38, 9))) as decimal(38, 9)) as failed_job_gpu_hours,
        cast(sum(cast(cancelled_job_gpu_hours as decimal(38, 9))) as decimal(38, 9)) as cancelled_job_gpu_hours,
        case when sum(measured_gpu_hours) > 0
             then cast(round(100.0 * sum(used_gpu_hours) / sum(measured_gpu_hours), 6) as decimal(18, 6)) end
            as utilisation_pct
    from unioned
    group by cast(hour_start as date), team_id, workload_id, gpu_model
)

select
    final.*,
    input_digests.digest as x_inputs_digest,
    -- when this build ran: the days a build rewrote carry its stamp
    cast({{ dbt.current_timestamp() }} as timestamp) as x_built_at
from final
left join input_digests on input_digests.day = final.day
