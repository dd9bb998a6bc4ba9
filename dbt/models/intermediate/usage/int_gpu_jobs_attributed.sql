{{ config(
    materialized='incremental',
    incremental_strategy=gpu_ledger.day_incremental_strategy(),
    partition_by=gpu_ledger.day_partition_by('x_job_day'),
    unique_key='x_job_day',
    on_schema_change='append_new_columns',
    pre_hook=[
        {"sql": "{{ gpu_ledger.clear_when_history_changed(ref('int_gpu_jobs_history_key'), [('x_built_at', 'timestamp')]) }}", "transaction": false},
        {"sql": "{{ gpu_ledger.clear_days('x_job_day', gpu_ledger.jobs_changed_days()) }}", "transaction": false}
    ]
) }}
-- Every scheduler job with its canonical GPU model, effective end, nodes and owner.
-- End: a running job has no End, so started_at + Elapsed (the accounting snapshot) stands in.
-- Owner: Slurm account / k8s namespace through registry mappings (slurm_account, namespace), then a
-- `team` label or a comment naming a team id or alias, then the owner of the workload named by a
-- `workload`/`workload_id` label or the comment; otherwise '(unallocated)', never dropped.
-- Nodes: the Slurm hostlist (`a100gpu[2,4]`, `omni[1,10-12]`) expanded; GPUs split evenly over nodes.
-- gpu_fraction: the share of one physical GPU each device is (docs/cost_model.md, "Physical GPUs"): a MIG
-- profile's slices from the mig_profiles seed (compute slices of 7, or memory slices of 8 under policy
-- mig_fraction_rule: memory; a profile the seed lacks counts its '<n>g' compute slices of 7), a HAMi share
-- (gpucores, or gpumem-percentage under the memory rule), a time-sliced device 1 / replicas (policy
-- gpu_time_slicing, by pool or host), else 1. allocated_gpu_hours counts it.
-- Incremental by UTC day of the job's start (x_job_day: else its submission, else 1970-01-01;
-- macros/incremental_days.sql): a row is one job's latest record with rules that span all history, so a
-- run rebuilds the days of jobs in files loaded since the watermark x_loaded_at (new, late or restated
-- accounting) and the days those jobs were kept under before (a restated job that moved day), and the
-- backfill window; every day when int_gpu_jobs_history_key changed (registry files, scontrol inventory,
-- the SQL and seeds upstream). A night reads the latest rows of the jobs on its days only
-- (macros/latest_rows.sql), not the view's window over every job ever loaded.
{%- if is_incremental() %}
    {%- set plan = history_days(jobs_changed_days(), ref('int_gpu_jobs_history_key')) %}
{%- else %}
    {%- set plan = {'all': true, 'days': []} %}
{%- endif %}
-- depends_on: {{ source('usage', 'gpu_jobs') }}
with jobs as (
    {{ staged_rows_of_plan(ref('stg_usage__gpu_jobs'), staged_gpu_jobs, job_day('started_at', 'submitted_at'), plan) }}
),

inventory as (
    select * from {{ ref('stg_usage__gpu_inventory') }}
),

mappings as (
    select * from {{ ref('stg_registry__mappings') }}
),

teams as (
    select * from {{ ref('stg_registry__teams') }}
),

workloads as (
    select * from {{ ref('stg_registry__workloads') }}
),

policies as (
    select mig_fraction_rule from {{ ref('int_cost_policies') }}
),

mig_profiles as (
    select * from {{ ref('mig_profiles') }}
),

-- policies.gpu_time_slicing (docs/registry.md): [{match: [patterns], replicas: N}]. The NVIDIA device plugin's
-- time-slicing advertises each GPU as N devices; a pattern is compared, case-insensitively with '*' as a
-- wildcard, with the job's pool id ('<scheduler>:<cluster>') and with 'host:<node>' for each of its nodes.
time_slicing_entries as (
    select {{ explode_list(json_object_list('value')) }} as entry
    from {{ ref('stg_registry__policies') }}
    where policy = 'gpu_time_slicing'
),

time_slicing as (
    select lower(trim(pattern)) as pattern, replace(lower(trim(pattern)), '*', '%') as like_pattern, replicas
    from (
        select {{ explode_list(json_string_list(json_member('entry', "'match'"))) }} as pattern,
               try_cast({{ json_text('entry', "'replicas'") }} as bigint) as replicas
        from time_slicing_entries
    ) as patterns
    where pattern is not null and trim(pattern) <> '' and replicas >= 1
),

team_names as (
    select lower(team_id) as match_value, team_id from teams
    union
    select lower(trim(alias)), team_id from teams, {{ lateral_explode(json_string_list('teams.aliases')) }} as a(alias)
),

node_groups as (
    select job_key, {{ explode_list(regex_all('node_list', "'[^,\\[\\]]+(\\[[^\\]]*\\])?'")) }} as node_group
    from jobs
    where node_list is not null and node_list not in ('None assigned', '(null)')
),

node_items as (
    select
        job_key,
        regexp_extract(node_group, '^([^\[]*)', 1) as prefix,
        {{ explode_list("case when node_group like '%[%' then "
                        ~ split_text("regexp_extract(node_group, '\\[([^\\]]*)\\]', 1)", ",")
                        ~ " else " ~ list_of(["''"]) ~ " end") }} as item
    from node_groups
),

node_numbers as (
    select
        job_key,
        prefix,
        length(split_part(item, '-', 1)) as width,
        {{ explode_list("case when item = '' then " ~ list_of(['cast(null as bigint)'])
                        ~ " else " ~ int_series("cast(split_part(item, '-', 1) as bigint)",
                                                "cast(coalesce(nullif(split_part(item, '-', 2), ''), split_part(item, '-', 1)) as bigint)")
                        ~ " end") }} as n
    from node_items
),

nodes_expanded as (
    select job_key, case when n is null then prefix else prefix || lpad(cast(n as string), cast(width as integer), '0') end as node
    from node_numbers
),

job_nodes as (
    select job_key, {{ sorted_distinct_list('node') }} as nodes
    from nodes_expanded
    group by job_key
),

gpu_nodes as (
    select job_nodes.job_key, bool_or(inventory.gpu_count > 0) as on_gpu_node,
           any_value(inventory.gpu_type) filter (where inventory.gpu_count > 0) as node_gpu_type
    from job_nodes, {{ lateral_explode('job_nodes.nodes') }} as n(node)
    inner join inventory on inventory.node = n.node
    group by job_nodes.job_key
),

account_teams as (
    select kind, match_value, any_value(team_id) as team_id, any_value(workload_id) as workload_id
    from mappings
    where kind in ('slurm_account', 'namespace')
    group by all
),

label_values as (
    select
        job_key,
        lower(trim(coalesce({{ json_text('labels', "'team'") }}, {{ json_text('labels', "'label_team'") }},
                            {{ json_text('labels', "'owner_team'") }}))) as label_team,
        lower(trim(coalesce({{ json_text('labels', "'workload'") }}, {{ json_text('labels', "'workload_id'") }},
                            {{ json_text('labels', "'label_workload'") }},
                            comment))) as label_workload,
        lower(trim(comment)) as comment_value
    from jobs
),

resolved as (
    select
        jobs.*,
        job_nodes.nodes,
        coalesce(gpu_nodes.on_gpu_node, false) as on_gpu_node,
        coalesce(
            aliases.gpu_model,
            case when jobs.gpu_type is null then node_alias.gpu_model end,
            {{ canonical_gpu_model('jobs.gpu_type') }}
        ) as gpu_model,
        coalesce(jobs.ended_at, {{ add_seconds('jobs.started_at', 'jobs.elapsed_s') }}) as ended_at_effective,
        acct.team_id as account_team_id,
        acct.workload_id as account_workload_id,
        coalesce(label_team.team_id, comment_team.team_id) as label_team_id,
        label_workload.workload_id as label_workload_id
    from jobs
    left join job_nodes on job_nodes.job_key = jobs.job_key
    left join gpu_nodes on gpu_nodes.job_key = jobs.job_key
    {{ join_gpu_alias("split_part(jobs.gpu_type, ',', 1)") }}
    {{ join_gpu_alias('gpu_nodes.node_gpu_type', 'node_alias') }}
    left join account_teams as acct
        on (acct.kind = 'slurm_account' and jobs.scheduler = 'slurm' and acct.match_value = lower(trim(jobs.account)))
        or (acct.kind = 'namespace' and jobs.scheduler = 'kubernetes' and acct.match_value = lower(trim(jobs.namespace)))
    left join label_values on label_values.job_key = jobs.job_key
    left join team_names as label_team on label_team.match_value = label_values.label_team
    left join team_names as comment_team on comment_team.match_value = label_values.comment_value
    left join workloads as label_workload on lower(label_workload.workload_id) = label_values.label_workload
),

-- The replicas each job's devices are slices of: the longest matching pattern (then the most replicas). An
-- aggregate, not a window over job_key: the night's only window by job is latest_rows' (macros/latest_rows.sql).
job_time_slicing as (
    select job_key, max_by(replicas, length(pattern) * 1000000 + replicas) as replicas
    from (
        select jobs.job_key, ts.pattern, ts.replicas
        from jobs
        inner join time_slicing as ts
            on lower(jobs.scheduler || ':' || coalesce(jobs.cluster, '(default)')) like ts.like_pattern
        union all
        select job_nodes.job_key, ts.pattern, ts.replicas
        from job_nodes, {{ lateral_explode('job_nodes.nodes') }} as n(node)
        inner join time_slicing as ts on 'host:' || lower(n.node) like ts.like_pattern
    ) as matched
    group by job_key
),

fractions as (
    select
        resolved.*,
        case
            when resolved.mig_profile is not null and policies.mig_fraction_rule = 'memory' and mig.profile is not null
                then cast(mig.memory_slices as double) / mig.memory_slices_per_gpu
            when resolved.mig_profile is not null and mig.profile is not null
                then cast(mig.compute_slices as double) / mig.compute_slices_per_gpu
            when resolved.mig_profile is not null
                then cast(nullif(regexp_extract(resolved.mig_profile, '^([0-9]+)g', 1), '') as double) / 7.0
            when policies.mig_fraction_rule = 'memory' and coalesce(resolved.gpu_memory_share, resolved.gpu_share) is not null
                then coalesce(resolved.gpu_memory_share, resolved.gpu_share)
            when coalesce(resolved.gpu_share, resolved.gpu_memory_share) is not null
                then coalesce(resolved.gpu_share, resolved.gpu_memory_share)
            when sliced.replicas is not null
                then 1.0 / cast(sliced.replicas as double)
            else 1.0
        end as gpu_fraction,
        case
            when resolved.mig_profile is not null and mig.profile is not null
                then 'MIG ' || resolved.mig_profile || ': ' || policies.mig_fraction_rule || ' slices (mig_profiles)'
            when resolved.mig_profile is not null
                then 'MIG ' || resolved.mig_profile || ': compute slices of 7 (profile not in mig_profiles for '
                     || coalesce(resolved.gpu_model, 'an unknown GPU') || ')'
            when coalesce(resolved.gpu_share, resolved.gpu_memory_share) is not null
                then 'shared GPU: ' || case when policies.mig_fraction_rule = 'memory' then 'memory' else 'compute' end
                     || ' share'
            when sliced.replicas is not null
                then 'time-sliced GPU: 1 of ' || cast(sliced.replicas as string) || ' replicas (gpu_time_slicing)'
            else 'whole GPU'
        end as gpu_fraction_basis
    from resolved
    cross join policies
    left join job_time_slicing as sliced on sliced.job_key = resolved.job_key
    left join mig_profiles as mig
        on mig.gpu_model = resolved.gpu_model and mig.profile = resolved.mig_profile
),

final as (
    select
        {{ star_except(['account_team_id', 'account_workload_id', 'label_team_id', 'label_workload_id'], 'resolved') }},
        coalesce(resolved.gpu_count, 0) > 0 as has_gpus,
        coalesce(resolved.gpu_count, 0) > 0 or resolved.on_gpu_node as is_gpu_job,
        greatest(coalesce({{ list_length('resolved.nodes') }}, 0), 1) as node_count,
        coalesce(resolved.gpu_count, 0) * resolved.gpu_fraction
            * {{ hours_between('resolved.started_at', 'resolved.ended_at_effective') }}
            as allocated_gpu_hours,
        coalesce(resolved.account_workload_id, resolved.label_workload_id) as workload_id,
        coalesce(
            resolved.account_team_id,
            resolved.label_team_id,
            workloads.team_id,
            '(unallocated)'
        ) as team_id,
        case
            when resolved.account_team_id is not null then
                case when resolved.scheduler = 'slurm' then 'slurm_account' else 'namespace' end
            when resolved.label_team_id is not null then 'label'
            when workloads.team_id is not null then 'workload owner'
            else 'none'
        end as team_basis,
        case
            when resolved.state in ('FAILED', 'NODE_FAIL', 'OUT_OF_MEMORY', 'TIMEOUT', 'PREEMPTED') then 'failed'
            when resolved.state = 'CANCELLED' then 'cancelled'
            when resolved.state = 'COMPLETED' then 'completed'
            when resolved.state in ('RUNNING', 'PENDING') then lower(resolved.state)
            else 'unknown'
        end as outcome,
        {{ job_day('resolved.started_at', 'resolved.submitted_at') }} as x_job_day,
        {{ latest_file_load() }} as x_loaded_at,
        (select max(x_history_key) from {{ ref('int_gpu_jobs_history_key') }}) as x_history_key,
        cast({{ dbt.current_timestamp() }} as timestamp) as x_built_at
    from fractions as resolved
    left join workloads on workloads.workload_id = coalesce(resolved.account_workload_id, resolved.label_workload_id)
)

select * from final
