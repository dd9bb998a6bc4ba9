-- One row per GPU job that failed or was cancelled, with its GPU-hours ready to be priced as waste.
with failed as (
    select * from {{ ref('int_gpu_failed_work') }}
),

final as (
    select
        job_key,
        job_id,
        array_job_id,
        job_name,
        user_name,
        scheduler,
        cluster,
        pool_id,
        partition,
        node_list,
        failure_state,
        state_raw,
        failure_cause,
        is_failure,
        is_cancelled,
        exit_code,
        submitted_at,
        started_at,
        ended_at,
        cast(ended_at as date) as ended_on,
        elapsed_s,
        gpu_count,
        gpu_type,
        gpu_model,
        failed_gpu_hours,
        used_gpu_hours,
        gpu_util_pct,
        gpu_allocation_missing,
        team_id,
        workload_id,
        team_basis,
        attempt_number,
        was_restarted,
        restart_job_key,
        is_restart_of_failure
    from failed
)

select * from final
