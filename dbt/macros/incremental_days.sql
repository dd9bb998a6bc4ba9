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
   inserts them again; Spark overwrites the rebuilt days' partitions (dynamic partition overwrite). #}
{% macro day_incremental_strategy() -%}
    {{ return(adapter.dispatch('day_incremental_strategy', 'gpu_ledger')()) }}
{%- endmacro %}
{% macro default__day_incremental_strategy() -%}{{ return('delete+insert') }}{%- endmacro %}
{% macro spark__day_incremental_strategy() -%}{{ return('insert_overwrite') }}{%- endmacro %}

{% macro day_partition_by(column) -%}
    {{ return(adapter.dispatch('day_partition_by', 'gpu_ledger')(column)) }}
{%- endmacro %}
{% macro default__day_partition_by(column) -%}{{ return(none) }}{%- endmacro %}
{% macro spark__day_partition_by(column) -%}{{ return([column]) }}{%- endmacro %}
