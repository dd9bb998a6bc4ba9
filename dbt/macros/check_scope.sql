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
    {%- set name = check_name or model.name -%}
    {%- if not execute or flags.FULL_REFRESH or target.type != 'duckdb' -%}
        true
    {%- else -%}
        {%- set results = adapter.get_relation(database=target.database, schema='audit', identifier='check_results') -%}
        {%- set passed_at = none -%}
        {%- if results is not none -%}
            {%- set sql -%}
                select cast(max(checked_at) as string) from {{ results }}
                where check_name = '{{ name }}' and target = 'dbt' and status = 'pass'
            {%- endset -%}
            {%- set passed_at = run_query(sql).columns[0].values()[0] -%}
        {%- endif -%}
        {%- if passed_at is none -%}
            true
        {%- else -%}
            ({{ stamp }} is null or {{ stamp }} > cast('{{ passed_at }}' as timestamp))
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}
