{#- What covers a usage hour before it is unbilled (int_gpu_usage_unbilled): GPU bill lines of the ledger
   and run records (training and eval runs, media batches).

   usage_cover_lines(plan): one row per GPU bill line and run record that overlaps a day of `plan`
   (macros/incremental_days.sql; every line in a full build): kind, the fields the coverage rules read
   (resource id and name in lower case, workload, GPU model) and the interval [start_at, end_at).
   A line covers the hours hour_buckets gives it (start_at < hour + 1 hour and end_at > hour): the
   digest's days are exactly the days of the hours it can cover. `gpu_model`: the run records' column
   read as their GPU model.

   usage_cover_digests(plan): per UTC day of the plan, `cover_digest`, an order-free digest of the distinct
   cover lines running on that day (rows_hash_digest over every field the rules read, with their count).
   The model stores it on each row of the day; a later run rebuilds the days whose digest is not the
   stored one: a new, restated or removed bill line or run record changes exactly the digests of the
   days it ran on, whatever file it came from (a re-delivered month with one line changed rebuilds that
   line's days). The digest reads every line of the history each night (at 365 days of fleet-256, 491k
   lines: md5 over their text 0.89 CPU s; this 0.30), so a run record counts by its GPU model as
   written, not by its canonical name (a regex match per run: 0.60 with it): the same text always gives
   the same name, and a name written differently for the same GPU only rebuilds the days of that run.
   A change of the name rules themselves (the macro canonical_gpu_model) moves int_usage_history_key,
   which covers the macros the usage models call: every day is rebuilt. -#}
{% macro usage_cover_lines(plan, gpu_model='gpu_model') -%}
    select 'bill' as kind, lower(ResourceId) as resource_id, lower(ResourceName) as resource_name,
           x_workload_id as workload_id, x_gpu_model as gpu_model,
           ChargePeriodStart as start_at, ChargePeriodEnd as end_at
    from {{ ref('ledger_focus') }}
    where ChargeCategory = 'Usage' and x_gpu_model is not null and x_gpu_hours is not null
      and ChargePeriodEnd > ChargePeriodStart
      and {{ gpu_ledger.overlaps_plan('ChargePeriodStart', 'ChargePeriodEnd', plan) }}
    union all
    select 'run', cast(null as string), cast(null as string), workload_id, gpu_model, started_at, ended_at
    from (
        select workload_id, {{ gpu_model }} as gpu_model, started_at, ended_at from {{ ref('stg_benchmarks__training_runs') }}
        union all
        select workload_id, {{ gpu_model }}, started_at, ended_at from {{ ref('stg_benchmarks__eval_runs') }}
        union all
        select workload_id, {{ gpu_model }}, started_at, ended_at from {{ ref('stg_benchmarks__media_batches') }}
    ) as runs
    -- a run without a workload or GPU model covers no hour (the coverage joins on both)
    where workload_id is not null and gpu_model is not null
      and {{ gpu_ledger.overlaps_plan('started_at', 'ended_at', plan) }}
{%- endmacro %}

{% macro usage_cover_digests(plan) -%}
    select day, concat({{ gpu_ledger.rows_hash_digest(['kind', 'resource_id', 'resource_name', 'workload_id', 'gpu_model',
                                                      'start_at', 'end_at']) }}, ':', cast(count(*) as string)) as cover_digest
    from (
        select distinct cast(d as date) as day, kind, resource_id, resource_name, workload_id, gpu_model, start_at, end_at
        from (
            select {{ gpu_ledger.day_buckets('lines.start_at', 'lines.end_at') }} as d, lines.*
            from ({{ gpu_ledger.usage_cover_lines(plan, 'gpu_model_as_written') }}) as lines
        ) as line_days
        where {{ gpu_ledger.in_plan('d', plan) }}
    ) as day_lines
    group by day
{%- endmacro %}

{#- SQL of the days int_gpu_usage_unbilled holds rows of while int_gpu_usage_hourly has no allocated hour on
   them any more (a restated job moved away): rebuilt, such a day gives no rows, so it is deleted first. -#}
{% macro unbilled_days_without_usage() -%}
    select stored.day from (select distinct day from {{ this }}) as stored
    left join (
        select distinct usage_date from {{ ref('int_gpu_usage_hourly') }} where allocated_gpu_hours > 0
    ) as allocated on allocated.usage_date = stored.day
    where allocated.usage_date is null
{%- endmacro %}
