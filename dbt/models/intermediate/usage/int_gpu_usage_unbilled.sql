{{ config(
    materialized='incremental',
    incremental_strategy=gpu_ledger.day_incremental_strategy(),
    partition_by=gpu_ledger.day_partition_by('day'),
    unique_key='day',
    on_schema_change='append_new_columns',
    pre_hook=[
        {"sql": "{{ gpu_ledger.clear_when_history_changed(ref('int_usage_history_key'), [('x_cover_digest', 'string'), ('x_built_at', 'timestamp')]) }}", "transaction": false},
        {"sql": "{{ gpu_ledger.clear_days('day', gpu_ledger.unbilled_days_without_usage()) }}", "transaction": false}
    ]
) }}
-- GPU-hours from schedulers (Slurm, Kubernetes) and telemetry (DCGM, nvidia-smi) split into the
-- hours something else already prices and the hours nothing prices yet. Grain: usage source row
-- (a job, or a GPU seen only in telemetry) x UTC day x team x workload x GPU model.
-- A GPU-hour is counted once (docs/cost_model.md, "Unpriced usage"): an hour of usage is
--   1. on a bill line when a GPU bill line of the ledger runs in that hour on the same host (the
--      usage host is the bill line's ResourceName, ResourceId or the last segment of ResourceId),
--      or is tagged to the same workload with the same GPU model (bill_covered_gpu_hours): the
--      bill prices it, at EffectiveCost;
--   2. else on a run record when a training run, eval run or media batch of the same workload and
--      GPU model runs in that hour (run_covered_gpu_hours): int_gpu_work_events prices the run;
--   3. else unbilled (unbilled_gpu_hours): int_gpu_work_events turns it into GPU work priced by
--      list price, owned hardware, or listed as unpriced (fct_unpriced_usage).
-- allocated = bill_covered + run_covered + unbilled on every row (assert_usage_gpu_hours_counted_once).
-- The site (registry policies owned_hardware.sites, usage_providers; int_gpu_sites) says where the
-- pool runs: owned hardware, or a rented provider with no bill line.
-- Incremental by UTC day (macros/incremental_days.sql): every rule above reads rows of one hour (usage,
-- the bill lines and runs running in it) and the pool's site, so a run rebuilds the days that
--   int_gpu_usage_hourly rebuilt since this model's watermark x_loaded_at, or that it holds no allocated
--   hour of any more (a restated job that moved away leaves no row to stamp: delete+insert replaces only
--   the days the rebuild gives rows, so the pre-hook clear_days deletes those days first);
--   have a cover digest (GPU bill lines and run records running on the day, macros/usage_cover.sql)
--   other than the one stored on their rows: a new, restated or removed bill line or run rebuilds the
--   days it ran on, not every day of its file (a re-delivered month, a restated run);
--   hold a pool whose site (int_gpu_pool_sites) is not the one stored on its rows;
-- and the backfill window. The other history-wide inputs (the registry with its site policies, the
-- usage models' SQL) are int_usage_history_key: when it changes, every day is rebuilt.
{%- if is_incremental() %}
    {%- set watermark = "(select coalesce(max(x_loaded_at), cast('1900-01-01' as timestamp)) from " ~ this ~ ")" %}
    {%- set changed_days_sql %}
        with hourly_days as (
            select usage_date, max(x_loaded_at) as x_loaded_at
            from {{ ref('int_gpu_usage_hourly') }}
            group by usage_date
        ),
        stored_days as (
            select distinct day, x_cover_digest from {{ this }}
        )
        select usage_date from hourly_days where x_loaded_at > {{ watermark }}
        union
        {{ gpu_ledger.unbilled_days_without_usage() }}
        union
        select stored_days.day from stored_days
        left join ({{ usage_cover_digests({'all': true, 'days': []}) }}) as cover on cover.day = stored_days.day
        where stored_days.x_cover_digest is distinct from cover.cover_digest
        union
        select distinct u.day from {{ this }} as u
        left join {{ ref('int_gpu_pool_sites') }} as sites on sites.pool_id = u.pool_id
        where u.site is distinct from sites.site or u.is_owned_site <> coalesce(sites.is_owned, false)
           or u.provider is distinct from sites.provider or u.pricing_category is distinct from sites.pricing_category
    {%- endset %}
    {%- set plan = history_days(changed_days_sql, ref('int_usage_history_key')) %}
{%- else %}
    {%- set plan = {'all': true, 'days': []} %}
{%- endif %}
with usage as (
    select * from {{ ref('int_gpu_usage_hourly') }}
    where allocated_gpu_hours > 0 and {{ in_plan('hour_start', plan) }}
),

bill_lines as (
    select
        lower(ResourceId) as resource_id,
        lower(ResourceName) as resource_name,
        x_workload_id,
        x_gpu_model,
        ChargePeriodStart,
        ChargePeriodEnd
    from {{ ref('ledger_focus') }}
    where ChargeCategory = 'Usage' and x_gpu_model is not null and x_gpu_hours is not null
      and ChargePeriodEnd > ChargePeriodStart
      and {{ overlaps_plan('ChargePeriodStart', 'ChargePeriodEnd', plan) }}
),

runs as (
    select cast(day_at as date) as day, workload_id, gpu_model, start_at, end_at
    from (
        select {{ day_buckets('lines.start_at', 'lines.end_at') }} as day_at, lines.*
        from ({{ usage_cover_lines(plan) }}) as lines
        where kind = 'run'
    ) as run_days
),

cover_digests as (
    {{ usage_cover_digests(plan) }}
),

-- A usage hour is bill-covered when a GPU bill line running in that hour names its host (ResourceName,
-- ResourceId, or the last segment of a path-like ResourceId) or is tagged to its workload and GPU
-- model. Both sides are turned into (kind, key, UTC day) rows and meet in one equi-join, the hour's
-- overlap checked on the pairs it finds; one join with the conditions OR'ed was a range join whose cost
-- grew with GPU-hours x bill lines (17.4 s -> 1.5 s at 256 GPUs x 30 days, same rows). The day is part
-- of the key because a workload's key alone pairs each of its usage hours with every bill line of the
-- workload in the month before the overlap test drops all but the few running in that hour: a line is
-- one row per day its hours fall on (day_buckets, the days of the hours it covers), so only lines of the
-- hour's own day are paired (at 1,000 GPUs x 30 days: 3.5 -> 0.8 s, the same rows; runs likewise).
bill_keys as (
    select cast(day_at as date) as day, kind, k1, k2, ChargePeriodStart, ChargePeriodEnd
    from (
        select {{ day_buckets('keys.ChargePeriodStart', 'keys.ChargePeriodEnd') }} as day_at, keys.*
        from (
            select 'host' as kind, host_key as k1, '' as k2, ChargePeriodStart, ChargePeriodEnd
            from ({{ bill_host_keys('bill_lines', ['ChargePeriodStart', 'ChargePeriodEnd']) }}) as host_keys
            union all
            select 'workload', x_workload_id, x_gpu_model, ChargePeriodStart, ChargePeriodEnd
            from bill_lines where x_workload_id is not null
        ) as keys
    ) as key_days
),

usage_keys as (
    select gpu_key, allocation_key, hour_start, cast(hour_start as date) as day, 'host' as kind, lower(host) as k1,
           '' as k2
    from usage where host is not null and instr(host, '/') = 0
    union all
    select gpu_key, allocation_key, hour_start, cast(hour_start as date), 'workload', workload_id, gpu_model
    from usage where workload_id is not null and gpu_model is not null
),

bill_covered as (
    select distinct usage_keys.gpu_key, usage_keys.allocation_key, usage_keys.hour_start
    from usage_keys
    inner join bill_keys
        on bill_keys.day = usage_keys.day and bill_keys.kind = usage_keys.kind and bill_keys.k1 = usage_keys.k1
        and bill_keys.k2 = usage_keys.k2
        and bill_keys.ChargePeriodStart < usage_keys.hour_start + interval 1 hour
        and bill_keys.ChargePeriodEnd > usage_keys.hour_start
    union
    -- rare: a host with a '/' of its own keeps the general match
    select distinct usage.gpu_key, usage.allocation_key, usage.hour_start
    from usage
    inner join bill_lines
        on {{ host_is_bill_resource('usage.host', 'bill_lines.resource_id', 'bill_lines.resource_name') }}
        and bill_lines.ChargePeriodStart < usage.hour_start + interval 1 hour
        and bill_lines.ChargePeriodEnd > usage.hour_start
    where instr(usage.host, '/') > 0
),

run_covered as (
    select distinct usage.gpu_key, usage.allocation_key, usage.hour_start
    from usage
    inner join runs
        on runs.day = cast(usage.hour_start as date)
        and runs.workload_id = usage.workload_id
        and runs.gpu_model = usage.gpu_model
        and runs.start_at < usage.hour_start + interval 1 hour
        and runs.end_at > usage.hour_start
),

site_match as (
    select * from {{ ref('int_gpu_pool_sites') }}
),

hours as (
    select
        usage.*,
        case when usage.allocation_basis = 'job' then coalesce(usage.scheduler, 'scheduler') || '_job'
             else 'gpu_telemetry' end as source_kind,
        case when usage.allocation_basis = 'job' then usage.job_key else usage.gpu_key end as source_ref,
        case when bill_covered.hour_start is not null then usage.allocated_gpu_hours else 0.0 end
            as bill_covered_gpu_hours,
        case when bill_covered.hour_start is null and run_covered.hour_start is not null
             then usage.allocated_gpu_hours else 0.0 end as run_covered_gpu_hours,
        case when bill_covered.hour_start is null and run_covered.hour_start is null
             then usage.allocated_gpu_hours else 0.0 end as unbilled_gpu_hours
    from usage
    left join bill_covered
        on bill_covered.gpu_key = usage.gpu_key
        and bill_covered.allocation_key = usage.allocation_key
        and bill_covered.hour_start = usage.hour_start
    left join run_covered
        on run_covered.gpu_key = usage.gpu_key
        and run_covered.allocation_key = usage.allocation_key
        and run_covered.hour_start = usage.hour_start
),

daily as (
    select
        source_kind,
        source_ref,
        cast(hour_start as date) as day,
        pool_id,
        team_id,
        workload_id,
        gpu_model,
        min(hour_start) as first_hour,
        min(host) as host,
        min(outcome) as outcome,
        sum(allocated_gpu_hours) as allocated_gpu_hours,
        sum(bill_covered_gpu_hours) as bill_covered_gpu_hours,
        sum(run_covered_gpu_hours) as run_covered_gpu_hours,
        sum(unbilled_gpu_hours) as unbilled_gpu_hours
    from hours
    group by source_kind, source_ref, cast(hour_start as date), pool_id, team_id, workload_id, gpu_model
),

final as (
    select
        md5(daily.source_kind || '|' || daily.source_ref || '|' || cast(daily.day as string) || '|'
            || coalesce(daily.team_id, '') || '|' || coalesce(daily.workload_id, '') || '|'
            || coalesce(daily.gpu_model, '')) as usage_day_id,
        daily.*,
        site_match.site,
        coalesce(site_match.is_owned, false) as is_owned_site,
        site_match.provider,
        site_match.pricing_category,
        cover_digests.cover_digest as x_cover_digest,
        {{ latest_file_load() }} as x_loaded_at,
        cast({{ dbt.current_timestamp() }} as timestamp) as x_built_at,
        (select max(x_history_key) from {{ ref('int_usage_history_key') }}) as x_history_key
    from daily
    left join site_match on site_match.pool_id = daily.pool_id
    left join cover_digests on cover_digests.day = daily.day
)

select * from final
