{#- Windowed full builds of the big day-grained models (bounded memory).

   A first build, a --full-refresh, or a rebuild of every day after a history-wide input changed
   (plan 'all', macros/incremental_days.sql) used to be one statement over the whole history: on
   DuckDB its joins and windows held all of it at once (int_gpu_usage_hourly ran out of memory on a
   365-day history under 3 GB). On DuckDB such a build now runs in windows of `build_window_days`
   UTC days with data (var or env GPU_LEDGER_BUILD_WINDOW_DAYS,
   default 7; 0 = one statement as before):
     - the model's plan becomes the window (day_window_plan): its day predicates compare with the
       session variables ledger_window_lo / ledger_window_hi, which DuckDB folds into constants (the
       scan filters push down as literal ranges do);
     - a pre-hook (reset_day_window) unsets them, so the model's own statement builds no rows (a
       NULL bound selects nothing) and creates the table with its columns;
     - a post-hook (insert_day_windows) inserts the model's compiled SQL once per window, in the
       model's transaction (a failed window leaves the previous table as it was). The first window is
       open below and the last open above, so every row lands in exactly one window whatever the
       range the bounds were taken from.
   Exact when every rule of the model joins rows of one day (or one hour) and takes history-wide
   inputs whole, as an incremental run of a few days already does. Spark keeps one statement. -#}

{# Days per window: var `build_window_days`, else env GPU_LEDGER_BUILD_WINDOW_DAYS, else 7 (0: no windows). #}
{% macro build_window_days() -%}
    {{ return(var('build_window_days', env_var('GPU_LEDGER_BUILD_WINDOW_DAYS', '7')) | int) }}
{%- endmacro %}

{# The plan a model builds with: a full plan becomes the window plan on DuckDB (not in a dbt unit test:
   it runs the model's SQL alone, without the hooks that set the window). #}
{% macro day_window_plan(plan) -%}
    {{ return(adapter.dispatch('day_window_plan', 'gpu_ledger')(plan)) }}
{%- endmacro %}
{% macro default__day_window_plan(plan) -%}
    {%- if plan['all'] and gpu_ledger.build_window_days() > 0 and model.resource_type != 'unit_test' -%}
        {{ return({'all': false, 'days': [], 'window': true}) }}
    {%- endif -%}
    {{ return(plan) }}
{%- endmacro %}
{% macro spark__day_window_plan(plan) -%}{{ return(plan) }}{%- endmacro %}

{% macro window_lo() -%}getvariable('ledger_window_lo'){%- endmacro %}
{% macro window_hi() -%}getvariable('ledger_window_hi'){%- endmacro %}

{# A pre-hook: no window bounds set, so the model's own statement selects no rows (a window left set
   by a failed build on the same connection would otherwise be built twice). #}
{% macro reset_day_window() -%}
    {{ return(adapter.dispatch('reset_day_window', 'gpu_ledger')()) }}
{%- endmacro %}
{% macro default__reset_day_window() -%}
    reset variable ledger_window_lo; reset variable ledger_window_hi
{%- endmacro %}
{% macro spark__reset_day_window() -%}{%- endmacro %}

{# A post-hook: when the model was compiled with the window plan, insert it once per window.
   `days_sql` returns the UTC days that hold the model's rows (one date column); they only place the
   window boundaries (the end windows are open, a day it misses still lands in a window), so any cheap
   approximation of the inputs' days will do. #}
{% macro insert_day_windows(days_sql) -%}
    {{ return(adapter.dispatch('insert_day_windows', 'gpu_ledger')(days_sql)) }}
{%- endmacro %}
{% macro spark__insert_day_windows(days_sql) -%}{%- endmacro %}
{% macro default__insert_day_windows(days_sql) -%}
    {%- set code = model.compiled_code if model.compiled_code is defined else none -%}
    {%- if execute and code and gpu_ledger.window_lo() in code -%}
        {%- set windows = gpu_ledger.day_windows(days_sql) -%}
        {%- for lo, hi in windows -%}
            {%- do run_query("set variable ledger_window_lo = cast('" ~ lo ~ "' as timestamp); "
                             ~ "set variable ledger_window_hi = cast('" ~ hi ~ "' as timestamp)") -%}
            {#- each window's rows in the order of the day key, as ordered_delete_insert writes them -#}
            {%- set key = config.get('unique_key') -%}
            {%- do run_query("insert into " ~ this ~ " by name\n"
                             ~ (("select * from (\n" ~ code ~ "\n) as window_rows order by " ~ key)
                                if key is string else code)) -%}
        {%- endfor -%}
        {{ log(this.identifier ~ ': built in ' ~ (windows | length) ~ ' windows of up to '
               ~ gpu_ledger.build_window_days() ~ ' days with data', info=true) }}
        {{ gpu_ledger.default__reset_day_window() }}
    {%- endif -%}
{%- endmacro %}

{# [lo, hi) bounds as text: a boundary at every `build_window_days`-th day that holds data, the first
   window from -infinity, the last to infinity (one window when there are no days). Days without data
   (a gap in a history) cost no window. #}
{% macro day_windows(days_sql) -%}
    {%- set days = [] -%}
    {%- for row in run_query(days_sql).rows if row[0] is not none -%}
        {%- do days.append((row[0] | string)[:10]) -%}
    {%- endfor -%}
    {%- set days = days | unique | sort | list -%}
    {%- set bounds = ['-infinity'] + days[gpu_ledger.build_window_days()::gpu_ledger.build_window_days()] + ['infinity'] -%}
    {%- set windows = [] -%}
    {%- for i in range(bounds | length - 1) -%}
        {%- do windows.append([bounds[i], bounds[i + 1]]) -%}
    {%- endfor -%}
    {{ return(windows) }}
{%- endmacro %}

{# The days the usage models' rows fall on: telemetry days and job start days (insert_day_windows). #}
{% macro usage_days() -%}
    select distinct sample_date from {{ ref('int_gpu_telemetry_hourly') }}
    union
    select distinct cast(started_at as date) from {{ ref('int_gpu_jobs_attributed') }}
{%- endmacro %}
