{{ config(
    materialized='incremental',
    incremental_strategy=gpu_ledger.day_incremental_strategy(),
    partition_by=gpu_ledger.day_partition_by('x_event_day'),
    unique_key='x_event_day',
    on_schema_change='append_new_columns',
    pre_hook=[
        {"sql": "{{ gpu_ledger.clear_when_history_changed(ref('int_gpu_work_events_history_key'), [('x_runs_digest', 'string'), ('x_built_at', 'timestamp')]) }}", "transaction": false},
        {"sql": "{{ gpu_ledger.clear_days('x_event_day', gpu_ledger.gpu_work_events_changed_days()) }}", "transaction": false}
    ]
) }}
-- Every piece of GPU work a workload did, in GPU-hours, split by the cost component it belongs
-- to: productive compute, checkpointing, failed work (failed or off-target runs, failed renders,
-- failed eval tasks) and queue overhead. Priced in int_gpu_work_priced.
-- Besides the run records, the scheduler and telemetry GPU-hours that no bill line and no run
-- record covers (int_gpu_usage_unbilled.unbilled_gpu_hours: a GPU-hour is counted once), per job or
-- GPU and day; those carry the usage's team, pool and site (owned hardware or a rented provider).
-- Incremental by UTC day of event_at (x_event_day; macros/gpu_work_days.sql): a row is one run record's
-- or one usage day's work, so a run rebuilds the days int_gpu_usage_unbilled rebuilt since this model
-- last did (or no longer holds), the days whose run records changed (when a benchmarks file was loaded
-- since the watermark: the per-day digest of their work, x_runs_digest, moved) and the backfill window;
-- every day when int_gpu_work_events_history_key changed (registry files, the SQL and seeds upstream).
{%- if is_incremental() %}
    {%- set plan = history_days(gpu_work_events_changed_days(), ref('int_gpu_work_events_history_key')) %}
{%- else %}
    {%- set plan = {'all': true, 'days': []} %}
{%- endif %}
with work as (
    select * from ({{ gpu_work_runs() }}) as runs
),

day_work as (
    select * from work where {{ in_plan(gpu_work_day('event_at'), plan) }}
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
    where unbilled_gpu_hours > 0 and {{ in_plan('day', plan) }}
),

all_work as (
    select work.*, cast(null as string) as team_id, cast(null as string) as pool_id, cast(null as string) as site,
           false as is_owned_site
    from day_work as work
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
        is_owned_site,
        {{ gpu_work_day('event_at') }} as x_event_day
    from all_work
    where gpu_hours > 0
),

run_digests as (
    {{ interval_day_digests(gpu_work_run_lines('day_work'), plan) }}
),

stamped as (
    select
        final.*,
        run_digests.digest as x_runs_digest,
        {{ latest_file_load() }} as x_loaded_at,
        (select max(x_history_key) from {{ ref('int_gpu_work_events_history_key') }}) as x_history_key,
        cast({{ dbt.current_timestamp() }} as timestamp) as x_built_at
    from final
    left join run_digests on run_digests.day = final.x_event_day
)

select * from stamped
