-- GPU-hours per day, team, workload and GPU model: billed, allocated, used, idle, failed.
-- Billed per team: cloud accounts from the ledger lines' own team; Slurm clusters and telemetry hosts
-- (capacity, not invoices) give each team the capacity it held (its allocation, scaled down when the
-- pool was over-allocated) and the rest to '(unallocated)'. Idle per team = its allocated idle
-- (measured - used) plus its share of the pool's unallocated idle (cloud: in proportion to billed
-- hours; capacity pools: all on '(unallocated)'). Summed over teams, billed and idle equal the pool's.
with usage as (
    select * from {{ ref('int_gpu_usage_hourly') }}
),

idle as (
    select * from {{ ref('int_gpu_idle_hourly') }}
),

billing as (
    select * from {{ ref('int_gpu_billing_hours_mapped') }}
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
             then usage_team_hours.allocated_gpu_hours
                  * least(1.0, idle.billed_gpu_hours / nullif(idle.allocated_gpu_hours, 0))
             else 0.0 end as billed_gpu_hours,
        usage_team_hours.allocated_gpu_hours,
        usage_team_hours.used_gpu_hours,
        usage_team_hours.measured_gpu_hours,
        greatest(usage_team_hours.measured_gpu_hours - usage_team_hours.used_gpu_hours, 0.0) as idle_gpu_hours,
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
        billing.billed_gpu_hours,
        0.0 as allocated_gpu_hours,
        0.0 as used_gpu_hours,
        0.0 as measured_gpu_hours,
        idle.unallocated_idle_gpu_hours * billing.billed_gpu_hours / nullif(idle.billed_gpu_hours, 0)
            as idle_gpu_hours,
        0.0 as failed_job_gpu_hours,
        0.0 as cancelled_job_gpu_hours
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
        unallocated_idle_gpu_hours as billed_gpu_hours,
        0.0 as allocated_gpu_hours,
        0.0 as used_gpu_hours,
        0.0 as measured_gpu_hours,
        unallocated_idle_gpu_hours as idle_gpu_hours,
        0.0 as failed_job_gpu_hours,
        0.0 as cancelled_job_gpu_hours
    from idle
    where capacity_basis in ('inventory', 'telemetry') and unallocated_idle_gpu_hours > 0
),

unioned as (
    {{ union_all_columns(['usage_rows', 'ledger_rows', 'capacity_rows'], [
        'hour_start', 'team_id', 'workload_id', 'gpu_model', 'billed_gpu_hours', 'allocated_gpu_hours',
        'used_gpu_hours', 'measured_gpu_hours', 'idle_gpu_hours', 'failed_job_gpu_hours', 'cancelled_job_gpu_hours']) }}
),

final as (
    select
        cast(hour_start as date) as day,
        team_id,
        workload_id,
        gpu_model,
        sum(billed_gpu_hours) as billed_gpu_hours,
        sum(allocated_gpu_hours) as allocated_gpu_hours,
        sum(used_gpu_hours) as used_gpu_hours,
        sum(measured_gpu_hours) as measured_gpu_hours,
        sum(coalesce(idle_gpu_hours, 0.0)) as idle_gpu_hours,
        sum(failed_job_gpu_hours) as failed_job_gpu_hours,
        sum(cancelled_job_gpu_hours) as cancelled_job_gpu_hours,
        case when sum(measured_gpu_hours) > 0
             then 100.0 * sum(used_gpu_hours) / sum(measured_gpu_hours) end as utilisation_pct
    from unioned
    group by cast(hour_start as date), team_id, workload_id, gpu_model
)

select * from final
