-- Idle GPU-hours per pool (Slurm cluster, cloud account with the hosts on its bill lines, telemetry-only
-- hosts), GPU model and day: unallocated and underused idle, missing readings (unmeasured, unobserved).
-- Hours are DECIMAL(38, 9) (exact sums: reruns publish the same digits).
with idle as (
    select * from {{ ref('int_gpu_idle_hourly') }}
),

final as (
    select
        pool_id,
        gpu_model,
        cast(hour_start as date) as day,
        any_value(capacity_basis) as capacity_basis,
        sum(billed_gpu_hours) as billed_gpu_hours,
        sum(allocated_gpu_hours) as allocated_gpu_hours,
        sum(used_gpu_hours) as used_gpu_hours,
        sum(measured_gpu_hours) as measured_gpu_hours,
        sum(unallocated_gpu_hours) as unallocated_gpu_hours,
        sum(underused_gpu_hours) as underused_gpu_hours,
        sum(unmeasured_gpu_hours) as unmeasured_gpu_hours,
        sum(unobserved_gpu_hours) as unobserved_gpu_hours,
        sum(unallocated_idle_gpu_hours) as unallocated_idle_gpu_hours,
        sum(allocated_idle_gpu_hours) as allocated_idle_gpu_hours,
        sum(idle_gpu_hours) as idle_gpu_hours,
        sum(over_allocation_gpu_hours) as over_allocation_gpu_hours,
        {{ sorted_distinct_join('idle_flag', '; ') }} as idle_flags,
        count(*) filter (where idle_flag is not null) as flagged_hours,
        case when sum(measured_gpu_hours) > 0
             then cast(round(100.0 * sum(used_gpu_hours) / sum(measured_gpu_hours), 6) as decimal(18, 6)) end
            as utilisation_pct
    from idle
    group by pool_id, gpu_model, cast(hour_start as date)
)

select * from final
