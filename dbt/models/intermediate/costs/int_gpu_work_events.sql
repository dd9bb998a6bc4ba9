-- Every piece of GPU work a workload did, in GPU-hours, split by the cost component it belongs
-- to: productive compute, checkpointing, failed work (failed or off-target runs, failed renders,
-- failed eval tasks) and queue overhead. Priced in int_gpu_work_priced.
-- Besides the run records, the scheduler and telemetry GPU-hours that no bill line and no run
-- record covers (int_gpu_usage_unbilled.unbilled_gpu_hours: a GPU-hour is counted once), per job or
-- GPU and day; those carry the usage's team, pool and site (owned hardware or a rented provider).
with policies as (
    select * from {{ ref('int_cost_policies') }}
),

training as (
    select *, (outcome <> 'completed' or not coalesce(reached_target, false)) as is_failed,
           coalesce(checkpoint_minutes_total, 0) / 60.0 as checkpoint_hours
    from {{ ref('stg_benchmarks__training_runs') }}
),

evals as (
    select *, case when coalesce(tasks_total, 0) > 0 then tasks_completed / tasks_total else 0 end as done_share
    from {{ ref('stg_benchmarks__eval_runs') }}
),

media as (
    -- gpu_hours is GPUs x the batch's wall time (started_at to ended_at), queue included: queue_minutes are
    -- minutes of that window the batch's GPUs were held waiting, so queue_overhead is carved out of
    -- gpu_hours (never added on top) and the rest is split into rendered and failed work.
    select *,
           case when coalesce(produced, 0) + coalesce(failed_renders, 0) > 0
                then coalesce(failed_renders, 0) / (produced + coalesce(failed_renders, 0)) else 0 end as failed_share,
           least(coalesce(queue_minutes, 0) / 60.0 * coalesce(gpu_count, 0), gpu_hours) as queue_gpu_hours
    from {{ ref('stg_benchmarks__media_batches') }}
),

serving as (
    select *, case when coalesce(completed, 0) + coalesce(failed, 0) > 0
                   then coalesce(failed, 0) / (completed + coalesce(failed, 0)) else 0 end as failed_share
    from {{ ref('fct_benchmark_runs') }}
    where workload_id is not null and gpu_model is not null and gpu_count > 0 and duration_s > 0
),

work as (
    select 'benchmark' as basis, workload_id, 'benchmark_run' as source_kind, run_id as source_ref,
           run_started_at as event_at, provider, gpu_model, pricing_category, 'gpu_compute' as component,
           duration_s / 3600.0 * gpu_count * (1 - failed_share) as gpu_hours, cast(null as string) as cause
    from serving
    union all
    select 'benchmark', workload_id, 'benchmark_run', run_id, run_started_at, provider, gpu_model, pricing_category,
           'retry_waste', duration_s / 3600.0 * gpu_count * failed_share, 'failed requests'
    from serving
    where failed_share > 0
    union all
    select 'production', workload_id, 'training_run' as source_kind, run_id as source_ref, started_at as event_at,
           provider, gpu_model, pricing_category,
           case when is_failed then 'failure_waste' else 'gpu_compute' end as component,
           (wall_hours - checkpoint_hours) * gpu_count as gpu_hours,
           case when is_failed then 'run ' || outcome || ', target ' ||
               case when coalesce(reached_target, false) then 'reached' else 'not reached' end end as cause
    from training
    union all
    select 'production', workload_id, 'training_run', run_id, started_at, provider, gpu_model, pricing_category,
           case when is_failed then 'failure_waste' else 'checkpointing' end,
           checkpoint_hours * gpu_count,
           case when is_failed then 'checkpoints of a failed run' end
    from training
    where checkpoint_hours > 0
    union all
    -- An eval suite is one output, accepted only when every task completed: a partial or failed suite
    -- is failure waste as a whole (as a failed training run is), not 92 % compute.
    select 'production', workload_id, 'eval_run', run_id, started_at, provider, gpu_model, pricing_category,
           'gpu_compute', wall_hours * gpu_count, null
    from evals
    where done_share >= 1
    union all
    select 'production', workload_id, 'eval_run', run_id, started_at, provider, gpu_model, pricing_category,
           'failure_waste', wall_hours * gpu_count, 'failed eval tasks: suite incomplete'
    from evals
    where done_share < 1
    union all
    select 'production', workload_id, 'media_batch', batch_id, started_at, policies.default_provider, gpu_model, 'on-demand',
           'gpu_compute', (gpu_hours - queue_gpu_hours) * (1 - failed_share), null
    from media, policies
    union all
    select 'production', workload_id, 'media_batch', batch_id, started_at, policies.default_provider, gpu_model, 'on-demand',
           'failure_waste', (gpu_hours - queue_gpu_hours) * failed_share, 'failed renders'
    from media, policies
    where failed_share > 0
    union all
    select 'production', workload_id, 'media_batch', batch_id, started_at, policies.default_provider, gpu_model, 'on-demand',
           'queue_overhead', queue_gpu_hours, 'GPUs held while the batch queued (inside its wall time)'
    from media, policies
    where queue_gpu_hours > 0
),

usage as (
    -- Unbilled scheduler / telemetry GPU-hours: failed jobs are failure waste, the rest compute.
    select 'production' as basis, workload_id, source_kind, source_ref || '@' || cast(day as string) as source_ref,
           first_hour as event_at, provider, gpu_model, coalesce(pricing_category, 'on-demand') as pricing_category,
           case when outcome = 'failed' then 'failure_waste' else 'gpu_compute' end as component,
           unbilled_gpu_hours as gpu_hours,
           case when outcome = 'failed' then 'job failed' end as cause,
           team_id, pool_id, site, is_owned_site
    from {{ ref('int_gpu_usage_unbilled') }}
    where unbilled_gpu_hours > 0
),

all_work as (
    select work.*, cast(null as string) as team_id, cast(null as string) as pool_id, cast(null as string) as site,
           false as is_owned_site
    from work
    union all
    select basis, workload_id, source_kind, source_ref, event_at, provider, gpu_model, pricing_category, component,
           gpu_hours, cause, team_id, pool_id, site, is_owned_site
    from usage
),

final as (
    select
        -- Ties broken on every column that can differ, so a rebuild gives each row the same id (ordered by
        -- gpu_hours alone, a failed run's work and its checkpoints, both failure_waste with equal hours,
        -- swapped ids between builds of the same data: 2 of 28,853 rows at 256 GPUs x 30 days).
        md5(basis || '|' || source_kind || '|' || source_ref || '|' || component || '|' || cast(row_number() over (
            partition by basis, source_kind, source_ref, component
            order by gpu_hours, cause, event_at, workload_id, provider, gpu_model, pricing_category, team_id, pool_id,
                     site) as string)) as event_id,
        basis,
        workload_id,
        source_kind,
        source_ref,
        event_at,
        provider,
        gpu_model,
        -- Our own formats write on_demand / reserved; the price catalog says on-demand / reserved-1y.
        case replace(lower(pricing_category), '_', '-')
            when 'reserved' then 'reserved-1y'
            when 'ondemand' then 'on-demand'
            else replace(lower(pricing_category), '_', '-')
        end as pricing_category,
        component,
        cast(gpu_hours as double) as gpu_hours,
        cause,
        team_id,
        pool_id,
        site,
        is_owned_site
    from all_work
    where gpu_hours > 0
)

select * from final
