{#- Incremental by calendar month (UTC), beside the day helpers of macros/incremental_days.sql: for a model
   whose rows of a month depend on the whole month of its inputs (estimates, observability and platform
   labour of a workload-month, shared pools of a billing period): int_workload_cost_lines,
   int_chargeback_lines.

   Deciding what changed must not cost a read of the history's rows (a digest of the inputs' rows grows
   with the history). So the model stores on every row of a month `x_inputs_digest`, an md5 over the
   month's input *stamps*, which cost a scan of two or three narrow columns:
     - an input incremental by day (int_gpu_usage_hourly, int_gpu_usage_unbilled, int_gpu_node_hours)
       rewrites a day whole with one build stamp x_built_at: its stamps are its days with their stamp
       (day_build_stamps), so a rebuilt, new or vanished day changes its month's digest;
     - an input rebuilt from landed files (the ledger, the API requests) keeps each row's file hash: its
       stamps are each file with its number of rows in the month (file_row_stamps), so a new, late or
       restated file changes the digest of every month it gives rows to or takes rows from.
   A run rebuilds, as whole months (whole_months),
     - the months whose digest is not the one stored on their rows (months_with_changed_digest: new,
       changed, and stored months no input holds any more), plus
     - the home months of rows that reach into a changed day of such a month (a run or a bill line that
       starts in one month and runs into the next is priced in the month it starts): the model keeps the
       stamp digest of every UTC day as of its last build (store_day_digests, a post-hook), so a run that
       crossed into March on its first night does not rebuild February on every night of March
       (months_reaching by day); before that table exists, every row reaching a changed month, plus
     - the backfill window;
   every month when the model's history key changed or a file of a family the stamps do not place was
   loaded (history_days, macros/incremental_days.sql). -#}

{#- The period (a date) of `ts` at `grain`: 'month' (its first day) or 'day'. -#}
{% macro stamp_period(ts, grain='month') -%}
    {%- if grain == 'day' -%}cast({{ ts }} as date){%- else -%}cast(date_trunc('month', {{ ts }}) as date){%- endif -%}
{%- endmacro %}

{#- Per period of `grain` (the column is named after it: `month` or `day`): md5 over the distinct stamps of
   `stamps` (SQL selects of `month_at`, the stamp's time, and `stamp` text). -#}
{% macro month_stamp_digests(stamps, grain='month') -%}
    select {{ gpu_ledger.stamp_period('all_stamps.month_at', grain) }} as {{ grain }},
           md5({{ gpu_ledger.sorted_distinct_join('all_stamps.stamp', ',') }}) as digest
    from (
        {%- for s in stamps %}
        {{ s }}
        {{ 'union all' if not loop.last }}
        {%- endfor %}
    ) as all_stamps
    where all_stamps.month_at is not null
    group by {{ gpu_ledger.stamp_period('all_stamps.month_at', grain) }}
{%- endmacro %}

{#- Stamps of a model incremental by day: each day with the build stamp its rows carry. -#}
{% macro day_build_stamps(relation, day_column, name) -%}
    select cast({{ day_column }} as timestamp) as month_at,
           concat('{{ name }}|', cast({{ day_column }} as string), '|', cast(max(x_built_at) as string)) as stamp
    from {{ relation }}
    group by {{ day_column }}
{%- endmacro %}

{#- Stamps of a model rebuilt from files: per period of `grain` of `ts_column`, each file (hash) and how many
   of its rows fall in the period. `name` tells several stamps of one relation apart. -#}
{% macro file_row_stamps(relation, ts_column, name, file_hash='x_file_hash', grain='month') -%}
    select cast({{ gpu_ledger.stamp_period(ts_column, grain) }} as timestamp) as month_at,
           concat('{{ name }}|', coalesce({{ file_hash }}, '~'), '|', cast(count(*) as string)) as stamp
    from {{ relation }}
    group by {{ gpu_ledger.stamp_period(ts_column, grain) }}, {{ file_hash }}
{%- endmacro %}

{#- SQL of the months (first day, a date) whose stamp digest is not the one stored on the model's rows in
   `digest_column`: months that gained, lost or changed a stamp, and months the model holds rows of that
   no input stamps any more. A month of stamps that gives the model no rows is rebuilt every run (it
   holds no rows, so that costs little). `grain` 'day': the same by UTC day (macros/day_stamps.sql). -#}
{% macro months_with_changed_digest(stamps, month_column, digest_column='x_inputs_digest', grain='month') -%}
    select coalesce(current_digests.{{ grain }}, stored.{{ grain }}) as {{ grain }}
    from ({{ gpu_ledger.month_stamp_digests(stamps, grain) }}) as current_digests
    full outer join (
        select distinct {{ gpu_ledger.stamp_period(month_column, grain) }} as {{ grain }}, {{ digest_column }} as digest
        from {{ this }}
    ) as stored
        on stored.{{ grain }} = current_digests.{{ grain }}
    where stored.digest is distinct from current_digests.digest
{%- endmacro %}

{#- SQL of the home months of `spans_sql` rows (home_at, start_at, end_at) whose interval [start_at, end_at)
   overlaps a period of `periods_sql` (one date column named after `grain`: `month`, its first day, or
   `day`) in another month than their own: a row whose lines live in the month of home_at but that reads
   inputs of every month it runs in (a run priced by a bill line of the next month, a bill line's idle share
   from the usage of its hours). By day (the changed days, store_day_digests): a change's first stamped day
   is never after the first instant it changes (usage by its day, a bill line by its start, a request by its
   start), and a row from an earlier month that reaches any later changed instant of a month also covers
   that month's first changed day. -#}
{% macro months_reaching(periods_sql, spans_sql, grain='month') -%}
    select distinct cast(date_trunc('month', spans.home_at) as date) as month
    from ({{ spans_sql }}) as spans
    inner join ({{ periods_sql }}) as changed
        on spans.start_at < cast(changed.{{ grain }} as timestamp) + interval 1 {{ grain }}
        and spans.end_at > cast(changed.{{ grain }} as timestamp)
        and cast(date_trunc('month', spans.home_at) as date) <> cast(date_trunc('month', changed.{{ grain }}) as date)
{%- endmacro %}

{#- The table beside a month-incremental model holding the stamp digest of each UTC day (`day`, `digest`)
   as of the model's last build: `<model>__day_digests` in the model's schema. Written by store_day_digests,
   read by changed_months; a table of the model's own, not a dbt node (a node would sit downstream of the
   model and upstream of its next plan). -#}
{% macro day_digests_relation() -%}
    {{ return(api.Relation.create(database=this.database, schema=this.schema,
                                  identifier=this.identifier ~ '__day_digests', type='table')) }}
{%- endmacro %}

{#- A post-hook (DuckDB): the day digests of `day_stamps` (the model's stamps at grain 'day') as they were
   when the model was built, for the next run's months_reaching by day. A failed build leaves the older table: its
   digests differ from today's on more days, never fewer, so the next run rebuilds more, never less. Spark
   builds from scratch (the table is not written there; changed_months falls back to whole months). -#}
{% macro store_day_digests(day_stamps) -%}
    {%- if execute and target.type != 'spark' -%}
        create or replace table {{ gpu_ledger.day_digests_relation() }} as
        {{ gpu_ledger.month_stamp_digests(day_stamps, 'day') }}
    {%- endif -%}
{%- endmacro %}

{#- The plan (macros/incremental_days.sql) with each of its days widened to every day of its month. -#}
{% macro whole_months(plan) -%}
    {%- if plan['all'] -%}
        {{ return(plan) }}
    {%- endif -%}
    {%- set days = [] -%}
    {%- for d in plan['days'] -%}
        {%- set first = modules.datetime.datetime.strptime((d | string)[:10], '%Y-%m-%d').date().replace(day=1) -%}
        {%- set following = (first + modules.datetime.timedelta(days=32)).replace(day=1) -%}
        {%- for i in range((following - first).days) -%}
            {%- do days.append((first + modules.datetime.timedelta(days=i)).isoformat()) -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return({'all': false, 'days': days | unique | sort | list}) }}
{%- endmacro %}

{#- The months an incremental run of a month-incremental model rebuilds: history_days over the months
   `changed_months_sql` returns (one date column), widened to whole months. -#}
{% macro month_plan(changed_months_sql, key_relation, rebuild_all_families=[]) -%}
    {{ return(gpu_ledger.whole_months(gpu_ledger.history_days(changed_months_sql, key_relation, rebuild_all_families))) }}
{%- endmacro %}

{#- The plan the model's SQL is compiled with, carried by that SQL as a comment
   (`/* months rebuilt: <json> */`, put first in the model): clear_months, a pre-hook rendered after the
   model's SQL, reads it there instead of computing the plan again (its stamp digests read the stamps of
   every month of the history, and the spans every run record). -#}
{% macro months_rebuilt_comment(plan) -%}
    /* months rebuilt: {{ tojson(plan) }} */
{%- endmacro %}

{#- The plan months_rebuilt_comment left in the model's compiled SQL; none when it carries none. -#}
{% macro compiled_month_plan() -%}
    {%- set found = modules.re.search('/[*] months rebuilt: ([{].*?[}]) [*]/', model.get('compiled_code') or '') -%}
    {{ return(fromjson(found.group(1)) if found else none) }}
{%- endmacro %}

{#- A pre-hook (DuckDB): deletes the months the run rebuilds (every row when it rebuilds all), so a month
   that gives no rows any more leaves none behind (Spark overwrites the partitions rebuilt). The months
   are those the model's SQL was compiled with (compiled_month_plan), computed once per run; the plan is
   computed here only for SQL that carries none. -#}
{% macro clear_months(month_column, changed_months_sql, key_relation, rebuild_all_families=[]) -%}
    {%- if execute and is_incremental() and target.type != 'spark' -%}
        {%- set plan = gpu_ledger.compiled_month_plan() -%}
        {%- if plan is none -%}
            {%- set plan = gpu_ledger.month_plan(changed_months_sql, key_relation, rebuild_all_families) -%}
        {%- endif -%}
        delete from {{ this }} where {{ gpu_ledger.in_plan(month_column, plan) }}
    {%- endif -%}
{%- endmacro %}

{#- SQL of the months a run must rebuild besides the backfill window: months_with_changed_digest and the
   home months of rows reaching them. With `day_stamps` (the same stamps at grain 'day') and the model's
   stored day digests (store_day_digests), rows reaching a changed day (new, restated and
   vanished days all differ from the stored digest); otherwise rows reaching a changed month. -#}
{% macro changed_months(stamps, month_column, spans_sql, day_stamps=none) -%}
    {#- Spark builds from scratch and stores no day digests: no lookup there -#}
    {%- set stored_days = gpu_ledger.day_digests_relation()
        if execute and day_stamps is not none and target.type != 'spark' else none -%}
    {%- if stored_days is not none and adapter.get_relation(stored_days.database, stored_days.schema,
                                                             stored_days.identifier) is none -%}
        {%- set stored_days = none -%}
    {%- endif -%}
    with changed_digest as (
        {{ gpu_ledger.months_with_changed_digest(stamps, month_column) }}
    )
    {%- if stored_days is not none %},
    changed_days as (
        select coalesce(current_days.day, stored_days.day) as day
        from ({{ gpu_ledger.month_stamp_digests(day_stamps, 'day') }}) as current_days
        full outer join {{ stored_days }} as stored_days on stored_days.day = current_days.day
        where stored_days.digest is distinct from current_days.digest
    )
    {%- endif %}
    select month from changed_digest
    union
    {% if stored_days is not none -%}
    {{ gpu_ledger.months_reaching('select day from changed_days', spans_sql, 'day') }}
    {%- else -%}
    {{ gpu_ledger.months_reaching('select month from changed_digest', spans_sql) }}
    {%- endif %}
{%- endmacro %}
