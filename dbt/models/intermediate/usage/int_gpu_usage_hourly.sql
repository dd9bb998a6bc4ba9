{{ config(
    materialized='incremental',
    incremental_strategy=gpu_ledger.day_incremental_strategy(),
    partition_by=gpu_ledger.day_partition_by('usage_date'),
    unique_key='usage_date',
    on_schema_change='append_new_columns',
    pre_hook=[{"sql": "{{ gpu_ledger.clear_when_history_changed(ref('int_usage_history_key'), [('x_built_at', 'timestamp'), ('x_bill_digest', 'string')]) }}", "transaction": false},
              {"sql": "{{ gpu_ledger.reset_day_window() }}", "transaction": false}],
    post_hook="{{ gpu_ledger.insert_day_windows(gpu_ledger.usage_days()) }}"
) }}
-- GPU-hours per GPU (or MIG slice, or a node's GPUs when the scheduler does not say which) per hour
-- and allocation. Grain: gpu_key x hour_start x allocation_key. Rules: docs/cost_model.md, "Physical GPUs".
--   Jobs and pods: a job holding G devices over [started_at, end) puts G x gpu_fraction (a MIG slice or a
--   HAMi share of one physical GPU, int_gpu_jobs_attributed) x (hours of the bucket it overlaps) in every
--   hour bucket it touches, split evenly over its nodes.
--   Telemetry: on a host-hour where a scheduler job or pod runs, the scheduler says what is allocated and
--   telemetry only measures; telemetry on a scheduler inventory node (scontrol) never allocates (the node's
--   GPUs are its pool's capacity). Elsewhere a sampled GPU-hour is allocated for the share of its samples
--   that name a pod, namespace or job or show activity, times the GPU share it stands for (MIG '1g.10gb'
--   = 1/7). Owner: namespace mapping.
--   Pools: a telemetry host that is a scontrol node is in that node's pool; one where pods or jobs ran is
--   in their pool; else telemetry:<host>. Before, a node's telemetry pool was added on top of its Slurm pool.
-- Used = allocated x utilisation: the job's own gpu_util_pct, else the telemetry average over the GPUs the
-- job held in the hour: series on its host labelled with its job id (DCGM hpc_job) or pod, or every GPU
-- of the host when the job holds the whole node (or the node has one GPU and the job no MIG slice).
-- Otherwise the hours are unmeasured (never another GPU's or another node's readings).
-- pool_id is the fleet identity: the bill line's pool when the host is a GPU bill line's resource (below).
-- Incremental by UTC day (usage_date; macros/incremental_days.sql). Every rule above joins rows of one
-- hour, except the history-wide ones. A run rebuilds the days that hold
--   telemetry hours int_gpu_telemetry_hourly rebuilt since this model's watermark x_loaded_at (the
--   latest file load the last build saw), the hours of jobs from files loaded since (a job spanning
--   midnight rebuilds both days) and the days those jobs held before (a restated job that moved),
--   the hours of GPU bill lines from files loaded since, the days of rows matched to a bill line that
--   changed, the days whose GPU bill hours are not the ones they were built with (a line gone:
--   x_bill_digest, macros/bill_charge_days.sql), the days of a telemetry host whose pool over all history
--   (counted over every job each run, without expanding hours) is not the one its rows carry, and the
--   backfill window.
-- The other history-wide rules (registry mappings and aliases, the scontrol inventory, the seeds, this
-- SQL) are the digest int_usage_history_key: when it changes, every day is rebuilt (history_days),
-- since any day's rows may move.
{%- if is_incremental() %}
    {%- set watermark = "(select coalesce(max(x_loaded_at), cast('1900-01-01' as timestamp)) from " ~ this ~ ")" %}
    {%- set changed_days_sql %}
        with new_files as ({{ files_loaded_since_last_build() }}),
        gpu_jobs as (
            select * from {{ ref('int_gpu_jobs_attributed') }}
            where has_gpus and started_at is not null and ended_at_effective > started_at
        ),
        changed_jobs as (
            select j.job_key from {{ ref('int_gpu_jobs_attributed') }} as j
            inner join new_files on new_files.file_hash = j.x_file_hash
        ),
        bills as (
            select x_charge_key, hour_start, x_file_hash from {{ ref('int_gpu_billing_hours_mapped') }}
        ),
        changed_charges as (
            select distinct bills.x_charge_key from bills inner join new_files on new_files.file_hash = bills.x_file_hash
        )
        select distinct sample_date from {{ ref('int_gpu_telemetry_hourly') }} where x_loaded_at > {{ watermark }}
        union
        select * from ({{ days_of_new_rows(ref('int_gpu_jobs_attributed'), 'started_at', 'ended_at_effective') }}) as job_days
        union
        select distinct u.usage_date from {{ this }} as u inner join changed_jobs on changed_jobs.job_key = u.job_key
        union
        select distinct cast(bills.hour_start as date) from bills inner join new_files on new_files.file_hash = bills.x_file_hash
        union
        select distinct u.usage_date from {{ this }} as u
        inner join changed_charges on changed_charges.x_charge_key = u.bill_charge_key
        union
        {{ bill_changed_days() }}
        union
        select distinct u.usage_date from {{ this }} as u
        left join ({{ scheduler_host_pools('gpu_jobs') }}) as pools on pools.node_key = u.host_key
        where u.allocation_basis = 'telemetry'
          and u.source_pool_id <> coalesce(pools.pool_id, 'telemetry:' || coalesce(u.host, '(no host)'))
    {%- endset %}
    {%- set plan = history_days(changed_days_sql, ref('int_usage_history_key')) %}
{%- else %}
    {%- set plan = {'all': true, 'days': []} %}
{%- endif %}
-- Every day at once (a first build, --full-refresh, history-wide inputs changed) runs in windows of
-- days on DuckDB, so memory does not grow with the history (macros/day_windows.sql).
{%- set plan = day_window_plan(plan) %}
with jobs as (
    select * from {{ ref('int_gpu_jobs_attributed') }}
    where has_gpus and started_at is not null and ended_at_effective > started_at
),

-- the jobs of the days rebuilt (all of them in a full build)
day_jobs as (
    select * from jobs where {{ overlaps_plan('started_at', 'ended_at_effective', plan) }}
),

nodes as (
    select * from {{ ref('int_gpu_nodes') }}
),

telemetry_hourly as (
    select * from {{ ref('int_gpu_telemetry_hourly') }}
    where {{ in_plan('hour_start', plan) }}
),

namespace_teams as (
    select match_value, any_value(team_id) as team_id, any_value(workload_id) as workload_id
    from {{ ref('stg_registry__mappings') }}
    where kind = 'namespace'
    group by match_value
),

job_nodes as (
    select jobs.*, {{ explode_list("coalesce(jobs.nodes, " ~ list_of(['cast(null as string)']) ~ ")") }} as node
    from day_jobs as jobs
),

job_hours as (
    select * from (
        select job_nodes.*, {{ host_key('job_nodes.node') }} as node_key,
               {{ hour_buckets('started_at', 'ended_at_effective') }} as hour_start
        from job_nodes
    ) as hours
    where {{ in_plan('hour_start', plan) }}
),

-- Telemetry per GPU (or MIG instance) x hour comes pre-aggregated from the incremental
-- int_gpu_telemetry_hourly; the GPU model name is resolved here so alias changes apply to all history.
telemetry_hours as (
    select
        {{ star_except(['gpu_model_reported', 'sample_date', 'x_loaded_at', 'x_built_at', 'x_history_key',
                       'x_first_of_gpu_hour'], 'telemetry_hourly') }},
        coalesce(host_aliases.node_key, {{ host_key('telemetry_hourly.host') }}) as host_key,
        coalesce(aliases.gpu_model, {{ canonical_gpu_model('telemetry_hourly.gpu_model_reported') }}) as gpu_model
    from telemetry_hourly
    {{ join_gpu_alias('telemetry_hourly.gpu_model_reported') }}
    left join {{ ref('int_host_aliases') }} as host_aliases
        on host_aliases.alias_key = {{ host_key('telemetry_hourly.host') }}
),

-- A physical-GPU row is dropped in an hour where the same GPU reports MIG slices (they would double count).
telemetry_gpus as (
    select *
    from telemetry_hours
    qualify not (mig_instance_id is null
                 and bool_or(mig_instance_id is not null) over (partition by gpu_uuid, hour_start))
),

-- Physical GPUs telemetry saw on a host in an hour (MIG slices count their GPU once), and its GPU model.
host_gpus as (
    select host_key, hour_start, count(distinct gpu_uuid) as gpus, min(gpu_model) as gpu_model
    from telemetry_gpus
    where host_key is not null
    group by host_key, hour_start
),

-- Hosts where scheduler jobs or pods ran, with their pool (the pool with most job-hours on the host over
-- all history, also in an incremental run).
scheduler_hosts as (
    {{ scheduler_host_pools('jobs') }}
),

scheduler_host_hours as (
    select distinct node_key, hour_start from job_hours where node_key is not null
),

-- Which telemetry GPU-hours each job-hour ran on (see the header). Equi-joins, the pairs kept once
-- (UNION): one join on OR'ed conditions compares every job-hour with every telemetry GPU-hour of the
-- hour (GPUs x jobs per hour: 109 s of the dbt build at 1,000 GPUs x 30 days).
labelled_pairs as (
    select job_hours.job_key, job_hours.node, job_hours.hour_start,
           telemetry_gpus.gpu_uuid, telemetry_gpus.mig_instance_id
    from job_hours
    inner join telemetry_gpus
        on telemetry_gpus.hour_start = job_hours.hour_start and telemetry_gpus.job_id = job_hours.job_id
    where telemetry_gpus.host_key is null or job_hours.node_key is null or telemetry_gpus.host_key = job_hours.node_key
    union
    select job_hours.job_key, job_hours.node, job_hours.hour_start,
           telemetry_gpus.gpu_uuid, telemetry_gpus.mig_instance_id
    from job_hours
    inner join telemetry_gpus
        on telemetry_gpus.hour_start = job_hours.hour_start
        and telemetry_gpus.namespace = job_hours.namespace and telemetry_gpus.pod = job_hours.pod
    where job_hours.scheduler = 'kubernetes'
      and (telemetry_gpus.host_key is null or job_hours.node_key is null or telemetry_gpus.host_key = job_hours.node_key)
),

labelled_job_hours as (
    select distinct job_key, node, hour_start from labelled_pairs
),

-- A job-hour with no labelled series takes every GPU of its host only when it holds them all.
whole_node_pairs as (
    select job_hours.job_key, job_hours.node, job_hours.hour_start,
           telemetry_gpus.gpu_uuid, telemetry_gpus.mig_instance_id
    from job_hours
    inner join telemetry_gpus
        on telemetry_gpus.hour_start = job_hours.hour_start and telemetry_gpus.host_key = job_hours.node_key
    left join nodes on nodes.node_key = job_hours.node_key
    left join host_gpus on host_gpus.host_key = job_hours.node_key and host_gpus.hour_start = job_hours.hour_start
    left join labelled_job_hours as labelled
        on labelled.job_key = job_hours.job_key and labelled.node is not distinct from job_hours.node
        and labelled.hour_start = job_hours.hour_start
    where labelled.job_key is null
      and job_hours.mig_profile is null
      and (coalesce(job_hours.gpu_count, 0) * job_hours.gpu_fraction / job_hours.node_count
               >= coalesce(nodes.physical_gpus, host_gpus.gpus)
           or coalesce(nodes.physical_gpus, host_gpus.gpus) = 1)
),

job_telemetry_pairs as (
    select * from labelled_pairs
    union all
    select * from whole_node_pairs
),

job_telemetry as (
    select
        pairs.job_key,
        pairs.node,
        pairs.hour_start,
        avg(telemetry_gpus.util_pct) as util_pct,
        avg(telemetry_gpus.memory_used_mib) as memory_used_mib
    from job_telemetry_pairs as pairs
    inner join telemetry_gpus
        on telemetry_gpus.gpu_uuid = pairs.gpu_uuid
        and telemetry_gpus.mig_instance_id is not distinct from pairs.mig_instance_id
        and telemetry_gpus.hour_start = pairs.hour_start
    group by pairs.job_key, pairs.node, pairs.hour_start
),

-- Telemetry GPU-hours that allocate nothing of their own: a job was matched to them, or a scheduler job
-- or pod runs on their host in the hour.
covered_telemetry as (
    select distinct gpu_uuid, mig_instance_id, hour_start
    from job_telemetry_pairs
),

job_rows as (
    select
        job_hours.scheduler || ':' || job_hours.cluster || ':'
            || coalesce(job_hours.node, job_hours.namespace, job_hours.job_id) as gpu_key,
        job_hours.hour_start,
        job_hours.job_key as allocation_key,
        'job' as allocation_basis,
        job_hours.scheduler || ':' || job_hours.cluster as pool_id,
        job_hours.cluster,
        job_hours.node as host,
        job_hours.node_key as host_key,
        job_hours.namespace,
        cast(null as string) as gpu_uuid,
        cast(null as string) as mig_instance_id,
        job_hours.mig_profile,
        coalesce(job_hours.gpu_model, nodes.gpu_model, host_gpus.gpu_model) as gpu_model,
        cast(coalesce(nodes.physical_gpus, host_gpus.gpus) as double) as gpu_capacity,
        job_hours.job_key,
        job_hours.job_id,
        job_hours.job_name,
        job_hours.scheduler,
        job_hours.team_id,
        job_hours.workload_id,
        job_hours.team_basis,
        job_hours.state as job_state,
        job_hours.outcome,
        job_hours.gpu_count * job_hours.gpu_fraction / job_hours.node_count
            * {{ overlap_hours('job_hours.started_at', 'job_hours.ended_at_effective', 'job_hours.hour_start') }}
            as allocated_gpu_hours,
        coalesce(job_hours.gpu_util_pct, job_telemetry.util_pct) as util_pct,
        case when job_hours.gpu_util_pct is not null then 'job accounting'
             when job_telemetry.util_pct is not null then 'telemetry' end as util_basis,
        coalesce(job_hours.gpu_mem_max_mib, job_telemetry.memory_used_mib) as memory_used_mib,
        cast(null as bigint) as sample_count
    from job_hours
    left join nodes on nodes.node_key = job_hours.node_key and job_hours.scheduler = 'slurm'
    left join host_gpus on host_gpus.host_key = job_hours.node_key and host_gpus.hour_start = job_hours.hour_start
    left join job_telemetry
        on job_telemetry.job_key = job_hours.job_key
        and job_telemetry.node is not distinct from job_hours.node
        and job_telemetry.hour_start = job_hours.hour_start
),

telemetry_rows as (
    select
        'gpu:' || telemetry_gpus.gpu_uuid || coalesce('/mig' || telemetry_gpus.mig_instance_id, '') as gpu_key,
        telemetry_gpus.hour_start,
        'telemetry' as allocation_key,
        'telemetry' as allocation_basis,
        coalesce(scheduler_hosts.pool_id, 'telemetry:' || coalesce(telemetry_gpus.host, '(no host)')) as pool_id,
        cast(null as string) as cluster,
        telemetry_gpus.host,
        telemetry_gpus.host_key,
        telemetry_gpus.namespace,
        telemetry_gpus.gpu_uuid,
        telemetry_gpus.mig_instance_id,
        telemetry_gpus.mig_profile,
        telemetry_gpus.gpu_model,
        {{ mig_slice_fraction('telemetry_gpus.mig_profile', 'telemetry_gpus.gpu_model') }} as gpu_capacity,
        cast(null as string) as job_key,
        telemetry_gpus.job_id,
        telemetry_gpus.pod as job_name,
        case when telemetry_gpus.namespace is not null or telemetry_gpus.pod is not null then 'kubernetes' end
            as scheduler,
        cast(null as string) as team_id,
        cast(null as string) as workload_id,
        cast(null as string) as team_basis,
        cast(null as string) as job_state,
        case when scheduler_host_hours.node_key is not null or covered_telemetry.gpu_uuid is not null
                 then 'scheduler-allocated host'
             when telemetry_gpus.busy_samples > 0 then 'running' else 'unallocated' end as outcome,
        case when scheduler_host_hours.node_key is not null or covered_telemetry.gpu_uuid is not null then 0.0
             else {{ mig_slice_fraction('telemetry_gpus.mig_profile', 'telemetry_gpus.gpu_model') }}
                  * telemetry_gpus.busy_samples / telemetry_gpus.sample_count
        end as allocated_gpu_hours,
        telemetry_gpus.util_pct,
        case when telemetry_gpus.util_pct is not null then 'telemetry' end as util_basis,
        telemetry_gpus.memory_used_mib,
        telemetry_gpus.sample_count
    from telemetry_gpus
    left join covered_telemetry
        on covered_telemetry.gpu_uuid = telemetry_gpus.gpu_uuid
        and covered_telemetry.mig_instance_id is not distinct from telemetry_gpus.mig_instance_id
        and covered_telemetry.hour_start = telemetry_gpus.hour_start
    left join scheduler_host_hours
        on scheduler_host_hours.node_key = telemetry_gpus.host_key
        and scheduler_host_hours.hour_start = telemetry_gpus.hour_start
    left join scheduler_hosts on scheduler_hosts.node_key = telemetry_gpus.host_key
    left join nodes as inventory_nodes on inventory_nodes.node_key = telemetry_gpus.host_key
    -- A scontrol node's GPUs are its pool's capacity; its telemetry only measures the jobs on it.
    where inventory_nodes.node_key is null
),

telemetry_owned as (
    select
        {{ star_except(['team_id', 'workload_id', 'team_basis'], 'telemetry_rows') }},
        coalesce(namespace_teams.team_id, '(unallocated)') as team_id,
        namespace_teams.workload_id,
        case when namespace_teams.team_id is not null then 'namespace' else 'none' end as team_basis
    from telemetry_rows
    left join namespace_teams on namespace_teams.match_value = lower(trim(telemetry_rows.namespace))
),

unioned as (
    {{ union_all_columns(['job_rows', 'telemetry_owned'], [
        'gpu_key', 'hour_start', 'allocation_key', 'allocation_basis', 'pool_id', 'cluster', 'host', 'host_key', 'namespace',
        'gpu_uuid', 'mig_instance_id', 'mig_profile', 'gpu_model', 'gpu_capacity', 'job_key', 'job_id', 'job_name',
        'scheduler', 'team_id', 'workload_id', 'team_basis', 'job_state', 'outcome', 'allocated_gpu_hours',
        'util_pct', 'util_basis', 'memory_used_mib', 'sample_count']) }}
),

-- The fleet identity (a GPU-hour is counted once): a job or telemetry host that is the resource of a GPU
-- bill line running in that hour (ResourceName, ResourceId or its last path segment = the host) is that
-- bill line's GPU: the row joins the bill's pool (provider:account) instead of a pool of its own, and
-- takes the line's team and workload when its own source names none. source_pool_id keeps where it was seen.
bill_hosts as (
    select x_charge_key, hour_start, pool_id, team_id, workload_id, resource_id, resource_name
    from {{ ref('int_gpu_billing_hours_mapped') }}
    where {{ in_plan('hour_start', plan) }}
),

-- Each bill line's host keys as rows (macro bill_host_keys: the fleet identity rule in one place), so
-- usage meets them in one equi-join on (hour, key).
bill_host_keys as (
    {{ bill_host_keys('bill_hosts', ['x_charge_key', 'hour_start', 'pool_id', 'team_id', 'workload_id']) }}
),

fleet_matches as (
    select
        unioned.gpu_key,
        unioned.hour_start,
        unioned.allocation_key,
        keys.x_charge_key,
        keys.pool_id as bill_pool_id,
        keys.team_id as bill_team_id,
        keys.workload_id as bill_workload_id
    from unioned
    inner join bill_host_keys as keys
        on keys.hour_start = unioned.hour_start
        and keys.host_key = lower(unioned.host)
    where instr(unioned.host, '/') = 0
    union all
    -- rare: a host with a '/' of its own (its last segment is not the host) keeps the general match
    select
        unioned.gpu_key,
        unioned.hour_start,
        unioned.allocation_key,
        bill_hosts.x_charge_key,
        bill_hosts.pool_id,
        bill_hosts.team_id,
        bill_hosts.workload_id
    from unioned
    inner join bill_hosts
        on bill_hosts.hour_start = unioned.hour_start
        and {{ host_is_bill_resource('unioned.host', 'bill_hosts.resource_id', 'bill_hosts.resource_name') }}
    where instr(unioned.host, '/') > 0
),

-- The GPU bill hours of each day built, as a digest a later run compares (bill_changed_days).
bill_digests as (
    {{ bill_hour_day_digests(plan) }}
),

fleet as (
    select *
    from fleet_matches
    qualify row_number() over (partition by gpu_key, hour_start, allocation_key order by x_charge_key) = 1
),

final as (
    select
        {{ star_except(['pool_id', 'team_id', 'workload_id', 'allocated_gpu_hours'], 'unioned') }},
        coalesce(fleet.bill_pool_id, unioned.pool_id) as pool_id,
        unioned.pool_id as source_pool_id,
        fleet.x_charge_key as bill_charge_key,
        case when unioned.team_id = '(unallocated)' and fleet.bill_team_id is not null then fleet.bill_team_id
             else unioned.team_id end as team_id,
        coalesce(unioned.workload_id, fleet.bill_workload_id) as workload_id,
        -- Hours at a fixed scale (DECIMAL(38, 9)): sums of them are exact in any order, so reruns publish
        -- the same digits.
        cast(round(unioned.allocated_gpu_hours, 9) as decimal(38, 9)) as allocated_gpu_hours,
        case when unioned.util_pct is not null then cast(round(unioned.allocated_gpu_hours, 9) as decimal(38, 9))
             else cast(0 as decimal(38, 9)) end as measured_gpu_hours,
        cast(round(unioned.allocated_gpu_hours * least(greatest(unioned.util_pct, 0.0), 100.0) / 100.0, 9)
             as decimal(38, 9)) as used_gpu_hours,
        cast(unioned.hour_start as date) as usage_date,
        {{ latest_file_load() }} as x_loaded_at,
        -- when this build ran: a check reads only days built since it last passed (macros/check_scope.sql)
        cast({{ dbt.current_timestamp() }} as timestamp) as x_built_at,
        (select max(x_history_key) from {{ ref('int_usage_history_key') }}) as x_history_key,
        bill_digests.digest as x_bill_digest
    from unioned
    left join fleet
        on fleet.gpu_key = unioned.gpu_key
        and fleet.hour_start = unioned.hour_start
        and fleet.allocation_key = unioned.allocation_key
    left join bill_digests on bill_digests.day = cast(unioned.hour_start as date)
)

select * from final
