-- Idle share of the GPU time a workload is billed for, per workload and day: GPU-hours billed on
-- bill lines tagged to the workload against GPU-hours its usage telemetry or jobs show as used.
-- No usage record for that workload and day means the share is unknown (null) and nothing is
-- moved to idle: an absent collector is not evidence of idle GPUs.
with billed as (
    select x_workload_id as workload_id, cast(ChargePeriodStart as date) as day,
           sum(cast(x_gpu_hours as double)) as billed_gpu_hours
    from {{ ref('ledger_focus') }}
    where x_workload_id is not null and x_gpu_hours is not null and ChargeCategory = 'Usage'
    group by all
),

used as (
    -- Only usage records count as evidence (allocated GPU-hours from jobs or telemetry); the
    -- utilisation mart also carries billed-only rows, which say nothing about use.
    select workload_id, day, sum(used_gpu_hours) as used_gpu_hours
    from {{ ref('fct_gpu_utilisation_daily') }}
    where workload_id is not null
    group by all
    having sum(allocated_gpu_hours) > 0
),

final as (
    select
        billed.workload_id,
        billed.day,
        billed.billed_gpu_hours,
        used.used_gpu_hours,
        case when used.used_gpu_hours is not null
             then greatest(0.0, 1.0 - used.used_gpu_hours / nullif(billed.billed_gpu_hours, 0)) end as idle_share,
        case when used.used_gpu_hours > billed.billed_gpu_hours then 'used exceeds billed: idle set to 0' end
            as idle_flag
    from billed
    left join used using (workload_id, day)
)

select * from final
