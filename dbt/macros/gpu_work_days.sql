{#- int_gpu_work_events by UTC day (macros/incremental_days.sql): the run records' GPU work, the day of a
    work row, the run lines digested per day, and the days a run rebuilds (int_gpu_work_priced's too). -#}

{#- SQL of the GPU work of the run records (serving benchmarks, training and eval runs, media batches), one
    row per record and cost component, every day: basis, workload_id, source_kind, source_ref, event_at,
    provider, gpu_model, pricing_category, component, gpu_hours, cause. -#}
{% macro gpu_work_runs() -%}
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
        where {{ gpu_ledger.charged_benchmark_run() }}
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
    )
    select * from work
{%- endmacro %}

{#- The serving benchmark runs whose GPU time is charged (and whose requests count as outputs): those naming
    a workload, a GPU, a GPU count and a duration, and placed in time. A run without its start could fall in
    no month: assert_charged_benchmark_runs_have_a_start names it (a warning) instead of a NULL period
    failing the marts' checks. -#}
{% macro charged_benchmark_run(timed=true) -%}
    workload_id is not null and gpu_model is not null and gpu_count > 0 and duration_s > 0
    {%- if timed %} and run_started_at is not null{% endif %}
{%- endmacro %}

{#- The UTC day a work row is kept under (x_event_day): its event_at's; a record with no time (none so far)
    on 1970-01-01, so the day is never null (delete+insert matches days by equality). -#}
{% macro gpu_work_day(event_at) -%}
    coalesce(cast({{ event_at }} as date), cast('1970-01-01' as date))
{%- endmacro %}

{#- The run work rows of `relation` as lines for interval_day_digests: every field as text, on the hour of
    its event_at (an interval of one second), so a day's digest covers exactly the records of that day. -#}
{% macro gpu_work_run_lines(relation) -%}
    select concat_ws('|', r.basis, coalesce(r.workload_id, '~'), r.source_kind, r.source_ref,
                     coalesce(cast(r.event_at as string), '~'), coalesce(r.provider, '~'), coalesce(r.gpu_model, '~'),
                     coalesce(r.pricing_category, '~'), r.component, coalesce(cast(r.gpu_hours as string), '~'),
                     coalesce(r.cause, '~')) as line,
           cast({{ gpu_ledger.gpu_work_day('r.event_at') }} as timestamp) as start_at,
           {{ gpu_ledger.add_seconds('cast(' ~ gpu_ledger.gpu_work_day('r.event_at') ~ ' as timestamp)', '1') }} as end_at
    from {{ relation }} as r
{%- endmacro %}

{#- SQL of the days int_gpu_work_events rebuilds (and its pre-hook clears first, so a day left without work
    keeps no row): the days int_gpu_usage_unbilled wrote since this model's last build (x_built_at), the
    usage days it holds no unbilled GPU-hour of any more, and, when a benchmarks file was loaded since the
    watermark, the days whose run records' digest is not the one stored (a new, restated or removed record). -#}
{% macro gpu_work_events_changed_days() -%}
    {%- if not execute or not is_incremental() -%}
        {{ return('select cast(null as date)') }}
    {%- endif -%}
    {%- set sql -%}
        select distinct day from {{ ref('int_gpu_usage_unbilled') }}
        where x_built_at > (select coalesce(max(x_built_at), cast('1900-01-01' as timestamp)) from {{ this }})
        union
        select distinct x_event_day from {{ this }}
        where x_runs_digest is null
          and x_event_day not in (select day from {{ ref('int_gpu_usage_unbilled') }} where unbilled_gpu_hours > 0)
        {%- if gpu_ledger.gpu_work_runs_may_have_changed() %}
        union
        select day from ({{ gpu_ledger.days_with_changed_digest(gpu_ledger.gpu_work_run_lines('(' ~ gpu_ledger.gpu_work_runs() ~ ')'), 'x_event_day', 'x_runs_digest') }}) as runs_changed
        {%- endif %}
    {%- endset -%}
    {{ return(sql) }}
{%- endmacro %}

{#- SQL of the days int_gpu_work_priced rebuilds (and its pre-hook clears first): the days
    int_gpu_work_events wrote since this model's last build (x_built_at) and the days it holds that
    int_gpu_work_events holds no row of any more. -#}
{% macro gpu_work_priced_changed_days() -%}
    {%- if not execute or not is_incremental() -%}
        {{ return('select cast(null as date)') }}
    {%- endif -%}
    {%- set sql -%}
        select distinct x_event_day from {{ ref('int_gpu_work_events') }}
        where x_built_at > (select coalesce(max(x_built_at), cast('1900-01-01' as timestamp)) from {{ this }})
        union
        select distinct x_event_day from {{ this }}
        where x_event_day not in (select x_event_day from {{ ref('int_gpu_work_events') }})
    {%- endset -%}
    {{ return(sql) }}
{%- endmacro %}

{#- True when a benchmarks file was loaded since the build of int_gpu_work_events (its run records may have
    changed). A table built before it kept a watermark rebuilds every day anyway (history_days): false. -#}
{% macro gpu_work_runs_may_have_changed() -%}
    {%- set names = adapter.get_columns_in_relation(this) | map(attribute='name') | map('lower') | list -%}
    {%- if 'x_loaded_at' not in names or 'x_runs_digest' not in names -%}
        {{ return(false) }}
    {%- endif -%}
    {{ return(gpu_ledger.family_loaded_since_last_build('benchmarks')) }}
{%- endmacro %}
