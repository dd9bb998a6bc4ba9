-- GPU work that ended without a result: FAILED, NODE_FAIL, OUT_OF_MEMORY, TIMEOUT, PREEMPTED
-- (is_failure) and CANCELLED (kept, flagged separately: a user's choice, not always waste).
-- Only jobs that held GPUs or ran on GPU nodes. Restarts: the next job of the same user and job
-- name submitted after this one started counts as its restart (attempt numbers run per user+name).
with jobs as (
    select * from {{ ref('int_gpu_jobs_attributed') }}
),

attempts as (
    select
        jobs.*,
        row_number() over (
            partition by scheduler, cluster, user_name, job_name order by submitted_at, job_id
        ) as attempt_number,
        lead(job_key) over (
            partition by scheduler, cluster, user_name, job_name order by submitted_at, job_id
        ) as next_job_key,
        lead(submitted_at) over (
            partition by scheduler, cluster, user_name, job_name order by submitted_at, job_id
        ) as next_submitted_at,
        lag(outcome) over (
            partition by scheduler, cluster, user_name, job_name order by submitted_at, job_id
        ) as previous_outcome
    from jobs
    where job_name is not null and user_name is not null
),

final as (
    select
        jobs.job_key,
        jobs.job_id,
        jobs.array_job_id,
        jobs.job_name,
        jobs.user_name,
        jobs.scheduler,
        jobs.cluster,
        jobs.scheduler || ':' || jobs.cluster as pool_id,
        jobs.partition,
        jobs.node_list,
        jobs.state as failure_state,
        jobs.state_raw,
        case jobs.state
            when 'FAILED' then 'job exited non-zero'
            when 'NODE_FAIL' then 'node failure'
            when 'OUT_OF_MEMORY' then 'out of memory'
            when 'TIMEOUT' then 'hit the time limit'
            when 'PREEMPTED' then 'preempted'
            when 'CANCELLED' then 'cancelled'
        end as failure_cause,
        jobs.state <> 'CANCELLED' as is_failure,
        jobs.state = 'CANCELLED' as is_cancelled,
        jobs.exit_code,
        jobs.submitted_at,
        jobs.started_at,
        jobs.ended_at_effective as ended_at,
        jobs.elapsed_s,
        coalesce(jobs.gpu_count, 0) as gpu_count,
        jobs.gpu_type,
        jobs.gpu_model,
        coalesce(jobs.allocated_gpu_hours, 0.0) as failed_gpu_hours,
        coalesce(jobs.allocated_gpu_hours, 0.0) * jobs.gpu_util_pct / 100.0 as used_gpu_hours,
        jobs.gpu_util_pct,
        not jobs.has_gpus as gpu_allocation_missing,
        jobs.team_id,
        jobs.workload_id,
        jobs.team_basis,
        coalesce(attempts.attempt_number, 1) as attempt_number,
        attempts.next_job_key is not null and attempts.next_submitted_at >= jobs.started_at as was_restarted,
        case when attempts.next_submitted_at >= jobs.started_at then attempts.next_job_key end as restart_job_key,
        coalesce(attempts.previous_outcome in ('failed', 'cancelled'), false) as is_restart_of_failure
    from jobs
    left join attempts on attempts.job_key = jobs.job_key
    where jobs.state in ('FAILED', 'NODE_FAIL', 'OUT_OF_MEMORY', 'TIMEOUT', 'PREEMPTED', 'CANCELLED')
      and jobs.is_gpu_job
)

select * from final
