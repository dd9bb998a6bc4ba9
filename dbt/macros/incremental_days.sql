{# Incremental-by-day helpers (a nightly refresh costs in proportion to the new day).

   An incremental model keeps `x_loaded_at` (the latest audit.file_loads.loaded_at of the files its
   rows came from) as its watermark. In an incremental run it rebuilds exactly the UTC days that
     - hold rows of files loaded after that watermark (`changed_days_sql` returns them: new days,
       late files and restated files for earlier days), plus
     - the CLI backfill window: vars `backfill_from` / `backfill_to` (YYYY-MM-DD, inclusive).
   Those days are deleted from the model and re-inserted (incremental_strategy 'delete+insert',
   unique_key = the day column). A first build or `--full-refresh` builds every day. #}

{# UTC days (sorted 'YYYY-MM-DD' strings) an incremental run must rebuild. #}
{% macro incremental_days(changed_days_sql) -%}
    {%- if not execute -%}
        {{ return([]) }}
    {%- endif -%}
    {%- set days = [] -%}
    {%- for row in run_query(changed_days_sql).rows -%}
        {%- if row[0] is not none -%}
            {%- do days.append(row[0] | string) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set b_from = var('backfill_from', none) or var('backfill_to', none) -%}
    {%- set b_to = var('backfill_to', none) or b_from -%}
    {%- if b_from -%}
        {%- set first = modules.datetime.datetime.strptime(b_from | string, '%Y-%m-%d').date() -%}
        {%- set last = modules.datetime.datetime.strptime(b_to | string, '%Y-%m-%d').date() -%}
        {%- if last < first -%}
            {{ exceptions.raise_compiler_error('backfill_to ' ~ b_to ~ ' is before backfill_from ' ~ b_from) }}
        {%- endif -%}
        {%- for i in range((last - first).days + 1) -%}
            {%- do days.append((first + modules.datetime.timedelta(days=i)).isoformat()) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(days | unique | sort | list) }}
{%- endmacro %}

{# The days as half-open ranges [start, end) of consecutive days: a 365-day backfill is one range. #}
{% macro day_ranges(days) -%}
    {%- set ranges = [] -%}
    {%- for d in days -%}
        {%- set day = modules.datetime.datetime.strptime(d, '%Y-%m-%d').date() -%}
        {%- if ranges and ranges[-1][1] == day -%}
            {%- set previous = ranges.pop() -%}
            {%- do ranges.append([previous[0], day + modules.datetime.timedelta(days=1)]) -%}
        {%- else -%}
            {%- do ranges.append([day, day + modules.datetime.timedelta(days=1)]) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(ranges) }}
{%- endmacro %}

{# A predicate: `column` (a timestamp or date) falls on one of `days`; false when there are none.
   Plain range comparisons so the engine can push them into the raw table scan (zone maps). #}
{% macro in_days(column, days) -%}
    {%- set ranges = day_ranges(days) -%}
    {%- if ranges | length == 0 -%}
        false
    {%- else -%}
        ({% for r in ranges %}({{ column }} >= cast('{{ r[0] }}' as timestamp) and {{ column }} < cast('{{ r[1] }}' as timestamp)){{ ' or ' if not loop.last }}{% endfor %})
    {%- endif -%}
{%- endmacro %}

{# Files (by hash) recorded in audit.file_loads after the model's watermark `x_loaded_at`, with
   the landing time that stands in for rows that carry no time of their own. #}
{% macro files_loaded_since_last_build() -%}
    select file_hash, min(observed_at) as observed_at
    from {{ ref('stg_audit__file_loads') }}
    where loaded_at > (select coalesce(max(x_loaded_at), cast('1900-01-01' as timestamp)) from {{ this }})
    group by file_hash
{%- endmacro %}

{# How an engine replaces whole days of an incremental model: DuckDB deletes the rebuilt days and
   inserts them again in the order of the day (or month) key (ordered_delete_insert below); Spark
   overwrites the rebuilt days' partitions (dynamic partition overwrite). #}
{% macro day_incremental_strategy() -%}
    {{ return(adapter.dispatch('day_incremental_strategy', 'gpu_ledger')()) }}
{%- endmacro %}
{% macro default__day_incremental_strategy() -%}{{ return('ordered_delete_insert') }}{%- endmacro %}
{#- dbt's delete+insert, the rows inserted in the order of the model's day or month key (`unique_key`).
   A run that rebuilds many days (a first incremental pass, a changed history key, a backfill) then writes
   each day's rows next to each other, so a later night that replaces a day or a month deletes row groups
   of its own instead of rows spread over every row group of the table, which DuckDB's checkpoint then
   rewrote to reclaim them. On the 365-day fleet-256 ledger, replacing the last month and checkpointing:
   int_focus_export_rows 4.67 s as built against 0.58 s with the rows in key order, int_workload_cost_lines
   0.72 against 0.18, int_chargeback_lines 0.51 against 0.11. -#}
{% macro get_incremental_ordered_delete_insert_sql(arg_dict) -%}
    {{ get_incremental_delete_insert_sql(arg_dict) }}
    {%- if arg_dict['unique_key'] is string %}
    order by {{ arg_dict['unique_key'] }}
    {%- endif %}
{%- endmacro %}
{% macro spark__day_incremental_strategy() -%}{{ return('insert_overwrite') }}{%- endmacro %}

{% macro day_partition_by(column) -%}
    {{ return(adapter.dispatch('day_partition_by', 'gpu_ledger')(column)) }}
{%- endmacro %}
{% macro default__day_partition_by(column) -%}{{ return(none) }}{%- endmacro %}
{% macro spark__day_partition_by(column) -%}{{ return([column]) }}{%- endmacro %}

{#- History-wide inputs. A model whose rows of a day also depend on rules that span all history (a host's
   pool over every job-hour, registry mappings, aliases, the scontrol inventory) stores `x_history_key`,
   a digest of those inputs (model int_usage_history_key). When today's key differs from the stored one,
   rows of any day may change, so the run rebuilds every day; otherwise only the days `changed_days_sql`
   returns (and the backfill window). A table built before the model stored the key also rebuilds in full.
   Returns {'all': bool, 'days': [...]} for in_plan / overlaps_plan. -#}
{% macro history_days(changed_days_sql, key_relation, rebuild_all_families=[]) -%}
    {%- if not execute -%}
        {{ return({'all': false, 'days': []}) }}
    {%- endif -%}
    {%- if history_changed(key_relation) -%}
        {{ log(this.identifier ~ ': history-wide inputs changed, every day is rebuilt', info=true) }}
        {{ return({'all': true, 'days': []}) }}
    {%- endif -%}
    {%- for family in rebuild_all_families -%}
        {%- if family_loaded_since_last_build(family) -%}
            {{ log(this.identifier ~ ': new ' ~ family ~ ' files, every day is rebuilt', info=true) }}
            {{ return({'all': true, 'days': []}) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return({'all': false, 'days': incremental_days(changed_days_sql)}) }}
{%- endmacro %}

{# True when {{ this }} lacks the day/key columns or its stored key differs from `key_relation`'s. #}
{% macro history_changed(key_relation) -%}
    {%- set names = adapter.get_columns_in_relation(this) | map(attribute='name') | map('lower') | list -%}
    {%- if 'x_history_key' not in names or 'x_loaded_at' not in names -%}
        {{ return(true) }}
    {%- endif -%}
    {%- set sql -%}
        select count(*) from {{ key_relation }} as k
        where k.x_history_key = (select max(x_history_key) from {{ this }})
    {%- endset -%}
    {{ return(run_query(sql).columns[0].values()[0] == 0) }}
{%- endmacro %}

{# A pre-hook: when every day is rebuilt, DuckDB first empties the model, so a day no input holds any
   more leaves no rows behind (Spark overwrites the partitions rebuilt). A table built before the model
   had its day / watermark / key columns gets them here first: DuckDB cannot commit an alter of a table
   after a delete from it in one transaction (the build's append_new_columns would come after).
   `more_columns`: (name, type) of further columns the model adds, such as its build stamp; they are added
   first, since the model's own SQL may read them from {{ this }}. Then every other column the model's SQL
   returns that the table lacks, with the type DuckDB infers for it: a column a new version of the model
   adds (its SQL changed, so every day is rebuilt) failed the first build of every existing ledger when
   it was left to dbt. #}
{% macro clear_when_history_changed(key_relation, more_columns=[]) -%}
    {%- if execute and is_incremental() and target.type != 'spark' and history_changed(key_relation) -%}
        {%- set names = adapter.get_columns_in_relation(this) | map(attribute='name') | map('lower') | list -%}
        {%- for col, type in [(config.get('unique_key'), 'date'), ('x_loaded_at', 'timestamp'), ('x_history_key', 'string')] + more_columns
                if col not in names -%}
            {%- do run_query('alter table ' ~ this ~ ' add column ' ~ col ~ ' ' ~ type) -%}
            {%- do names.append(col | lower) -%}
        {%- endfor -%}
        {%- for row in run_query('describe (\n' ~ model.compiled_code ~ '\n)').rows if row[0] | lower not in names -%}
            alter table {{ this }} add column {{ adapter.quote(row[0]) }} {{ row[1] }};
        {% endfor -%}
        delete from {{ this }}
    {%- endif -%}
{%- endmacro %}

{# `column` falls on a day the plan rebuilds (or in the build window: macros/day_windows.sql). #}
{% macro in_plan(column, plan) -%}
    {%- if plan['all'] -%}true
    {%- elif plan.get('window') -%}({{ column }} >= {{ window_lo() }} and {{ column }} < {{ window_hi() }})
    {%- else -%}{{ in_days(column, plan['days']) }}{%- endif -%}
{%- endmacro %}

{# The interval [start_at, end_at) overlaps a day the plan rebuilds (a job spanning midnight). #}
{% macro overlaps_plan(start_at, end_at, plan) -%}
    {%- if plan['all'] -%}
        true
    {%- elif plan.get('window') -%}
        ({{ start_at }} < {{ window_hi() }} and {{ end_at }} > {{ window_lo() }})
    {%- else -%}
        {%- set ranges = day_ranges(plan['days']) -%}
        {%- if ranges | length == 0 -%}
            false
        {%- else -%}
            ({% for r in ranges %}({{ start_at }} < cast('{{ r[1] }}' as timestamp) and {{ end_at }} > cast('{{ r[0] }}' as timestamp)){{ ' or ' if not loop.last }}{% endfor %})
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}

{# The latest file load the build sees: a model's `x_loaded_at` when its rows depend on several
   families' files (files_loaded_since_last_build then finds what came after). #}
{% macro latest_file_load() -%}
    (select max(loaded_at) from {{ ref('stg_audit__file_loads') }})
{%- endmacro %}

{# SQL of the UTC days interval rows [start_at, end_at) of `relation` touch, for rows of files loaded
   since the last build (`file_hash` column), e.g. jobs of a new accounting file. #}
{% macro days_of_new_rows(relation, start_at, end_at, file_hash='x_file_hash') -%}
    select distinct cast(h as date) from (
        select {{ hour_buckets('spans.s', 'spans.e') }} as h
        from (
            select distinct r.{{ start_at }} as s, r.{{ end_at }} as e
            from {{ relation }} as r
            inner join ({{ files_loaded_since_last_build() }}) as new_files on new_files.file_hash = r.{{ file_hash }}
            where r.{{ start_at }} is not null and r.{{ end_at }} > r.{{ start_at }}
        ) as spans
    ) as hours
{%- endmacro %}

{# True when a file of `family` was loaded since the last build: for inputs whose earlier versions
   a model cannot place (a restated run record may have moved), so the model rebuilds every day. #}
{% macro family_loaded_since_last_build(family) -%}
    {%- if not execute -%}{{ return(false) }}{%- endif -%}
    {%- set sql -%}
        select count(*) from {{ ref('stg_audit__file_loads') }}
        where family = '{{ family }}'
          and loaded_at > (select coalesce(max(x_loaded_at), cast('1900-01-01' as timestamp)) from {{ this }})
    {%- endset -%}
    {{ return(run_query(sql).columns[0].values()[0] > 0) }}
{%- endmacro %}

{# A row as text (every column), for digests of small history-wide inputs. #}
{% macro row_text(relation_alias) -%}
    {{ return(adapter.dispatch('row_text', 'gpu_ledger')(relation_alias)) }}
{%- endmacro %}
{% macro default__row_text(relation_alias) -%}cast({{ relation_alias }} as string){%- endmacro %}
{% macro spark__row_text(relation_alias) -%}to_json(struct({{ relation_alias }}.*)){%- endmacro %}

{#- Per-day digests of the history-wide lines a model's day depends on (GPU bill lines and runs for
   int_gpu_usage_unbilled, pool windows and node-host bill hours for int_gpu_node_hours).
   `lines_sql` returns `line` (every field a rule reads, as text) and the interval [start_at, end_at) it
   applies to; a line counts on the days of the hours it touches (hour_buckets). Returns `day` and
   `digest`, an md5 over the day's distinct lines, for the days of `plan` (every day: {'all': true}).
   Stored on the day's rows, it finds the days whose lines changed (a new, restated or removed line
   changes exactly the digests of the days it touches, whatever file it came from). -#}
{% macro interval_day_digests(lines_sql, plan) -%}
    select cast(h as date) as day, md5({{ gpu_ledger.sorted_distinct_join('line', ',') }}) as digest
    from (
        select {{ gpu_ledger.hour_buckets('lines.start_at', 'lines.end_at') }} as h, lines.line
        from ({{ lines_sql }}) as lines
    ) as line_hours
    where {{ gpu_ledger.in_plan('h', plan) }}
    group by cast(h as date)
{%- endmacro %}

{#- SQL of the days whose digest (interval_day_digests over every day) is not the one stored on the
   model's rows in `digest_column`: days that gained, lost or changed a line, and days the model holds
   rows of that no line touches any more. -#}
{% macro days_with_changed_digest(lines_sql, day_column, digest_column) -%}
    select coalesce(current_digests.day, stored.day) as day
    from ({{ gpu_ledger.interval_day_digests(lines_sql, {'all': true, 'days': []}) }}) as current_digests
    full outer join (select distinct {{ day_column }} as day, {{ digest_column }} as digest from {{ this }}) as stored
        on stored.day = current_digests.day
    where stored.digest is distinct from current_digests.digest
{%- endmacro %}

{#- A pre-hook: DuckDB's delete+insert replaces only the days the rebuild gives rows; the days of
   `days_sql` are deleted first, so a rebuilt day that no longer holds any row leaves none behind
   (Spark overwrites the partitions rebuilt). -#}
{% macro clear_days(day_column, days_sql) -%}
    {%- if execute and is_incremental() and target.type != 'spark' -%}
        delete from {{ this }} where {{ day_column }} in ({{ days_sql }})
    {%- endif -%}
{%- endmacro %}

{#- The UTC day a scheduler job is kept under in int_gpu_jobs_attributed (x_job_day): its start's, else its
    submission's, else 1970-01-01 (never null: delete+insert matches days by equality). -#}
{% macro job_day(started_at, submitted_at) -%}
    coalesce(cast({{ started_at }} as date), cast({{ submitted_at }} as date), cast('1970-01-01' as date))
{%- endmacro %}

{#- SQL of the days a model keyed by restatable rows rebuilds (its pre-hook clears them first, so a day whose
    rows all moved keeps no row): the days (`day_expr` over the staged columns) of the latest rows of keys in
    files loaded since the watermark (staged_rows_of_new_files over `staged_macro`) and the days the stored
    rows of those keys are on (`built_day`: a restated row that moved day). int_gpu_jobs_attributed
    (job_key) and int_api_requests_allocated (request_id). -#}
{% macro restated_key_days(staged_macro, key, day_expr, built_day) -%}
    {%- if not execute or not is_incremental() -%}
        {{ return('select cast(null as date)') }}
    {%- endif -%}
    {%- set sql -%}
        with new_rows as (
            select staged.{{ key }}, {{ day_expr }} as day
            from ({{ gpu_ledger.staged_rows_of_new_files(staged_macro) }}) as staged
        )
        select day from new_rows
        union
        select built.{{ built_day }} from {{ this }} as built where built.{{ key }} in (select {{ key }} from new_rows)
    {%- endset -%}
    {{ return(sql) }}
{%- endmacro %}

{%- macro jobs_changed_days() -%}
    {{ return(gpu_ledger.restated_key_days(gpu_ledger.staged_gpu_jobs, 'job_key',
                                           gpu_ledger.job_day('staged.started_at', 'staged.submitted_at'), 'x_job_day')) }}
{%- endmacro %}

{%- macro api_requests_changed_days() -%}
    {{ return(gpu_ledger.restated_key_days(gpu_ledger.staged_api_requests, 'request_id',
                                           'cast(staged.started_at as date)', 'x_request_day')) }}
{%- endmacro %}

{#- A digest of the scontrol inventory (a node's GPUs, model and cluster), a history-wide input of the
    usage chain's keys (int_usage_history_key, int_gpu_jobs_history_key). -#}
{% macro inventory_digest() -%}
    select {{ gpu_ledger.sorted_distinct_join("concat_ws('/', coalesce(node, '~'), coalesce(stated_cluster, '~'), "
                                   ~ "coalesce(gpu_type, '~'), cast(gpu_count as string), cast(physical_gpu_count as string))",
                                   '|') }} as part
    from {{ ref('stg_usage__gpu_inventory') }}
{%- endmacro %}
