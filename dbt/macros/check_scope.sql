{#- Which rows of an incremental-by-day model a check reads: a nightly check costs what the night rebuilt,
   and still sees an impossible number on any day a build wrote.

   The model stamps each row with `x_built_at`, the time the build that wrote its day ran; a day is
   always rewritten whole (delete+insert by day), so every row of a day carries one stamp, and a full
   refresh or a history-wide rebuild restamps every day. The pipeline records each dbt test's outcome in
   audit.check_results (`checked_at`, after the build it checked; refreshes are serialised by the
   refresh lock, so a later build's stamp is later than that). A day whose rows all carry a stamp older
   than the last time the check passed was read by that passing run and no row of it changed since: the
   check reads only days stamped after it. Why a stamp and the check's own last pass, not the days the
   pipeline's plan rebuilt: a refresh that failed (a check failing, a killed run) leaves its rebuilt
   days in the ledger unpublished; they stay in scope until the check passes on them, whatever the next
   run rebuilds. Every row (`true`) when there is no such record: a ledger the pipeline never checked,
   a check that never passed, another engine than DuckDB (the audit tables live in the DuckDB ledger),
   `--full-refresh`.
   Returns a predicate on `stamp` (a column of the model's rows). -#}
{% macro built_since_last_pass(stamp='x_built_at', check_name=none) -%}
    {%- set passed_at = last_pass_at(check_name) -%}
    {%- if passed_at is none -%}
        true
    {%- else -%}
        ({{ stamp }} is null or {{ stamp }} > cast('{{ passed_at }}' as timestamp))
    {%- endif -%}
{%- endmacro %}

{#- The time the check last passed (text), none when its scope is every row (see above). -#}
{% macro last_pass_at(check_name=none) -%}
    {%- set name = check_name or model.name -%}
    {%- if not execute or flags.FULL_REFRESH or target.type != 'duckdb' -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set results = adapter.get_relation(database=target.database, schema='audit', identifier='check_results') -%}
    {%- if results is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set sql -%}
        select cast(max(checked_at) as string) from {{ results }}
        where check_name = '{{ name }}' and target = 'dbt' and status = 'pass'
    {%- endset -%}
    {{ return(run_query(sql).columns[0].values()[0]) }}
{%- endmacro %}

{#- The same scope for a check that joins several incremental-by-day models on the hour or the day (a
   host's pools or capacity across sources, a day's GPU-hours across the chain): the UTC days any of
   `sources` wrote since the check last passed, as a plan for in_plan / in_days
   (macros/incremental_days.sql); every day when there is no passing record. `sources`: (relation,
   day column, stamp column) of each model; `file_sources`: (relation, timestamp column, file hash
   column) of a model rebuilt whole from its files (GPU bill hours), whose days are those of its rows
   from files loaded since the pass (audit.file_loads). A rule that reads rows of one hour or one day of
   every source then reads every row a build changed since the pass, and the other sources' rows of
   those days beside them. -#}
{% macro days_built_since_last_pass(sources, file_sources=[], check_name=none) -%}
    {%- set passed_at = last_pass_at(check_name) -%}
    {%- if passed_at is none -%}
        {{ return({'all': true, 'days': []}) }}
    {%- endif -%}
    {%- set sql -%}
        {%- for relation, day_column, stamp in sources %}
        select distinct cast({{ day_column }} as string) from {{ relation }}
        where {{ stamp }} is null or {{ stamp }} > cast('{{ passed_at }}' as timestamp)
        {{ 'union' if not loop.last or file_sources }}
        {%- endfor %}
        {%- for relation, ts_column, file_hash in file_sources %}
        select distinct cast(cast({{ ts_column }} as date) as string) from {{ relation }}
        where {{ file_hash }} in (select file_hash from {{ target.database }}.audit.file_loads
                                  where loaded_at > cast('{{ passed_at }}' as timestamp))
        {{ 'union' if not loop.last }}
        {%- endfor %}
    {%- endset -%}
    {%- set days = [] -%}
    {%- for row in run_query(sql).rows if row[0] is not none -%}
        {%- do days.append(row[0] | string) -%}
    {%- endfor -%}
    {{ return({'all': false, 'days': days | unique | sort | list}) }}
{%- endmacro %}
