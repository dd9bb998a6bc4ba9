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

{#- The time the check last passed (text), none when its scope is every row (see above). `rules`: the
   digest of the rules a generic test derived from yml (column_constraints), which its compiled SQL
   carries as `/* check rules: <md5> */` and the pipeline records with the outcome
   (audit.check_results.rules_digest): only a pass under the same rules counts, so rules changed in yml
   (a column's check added) read every row until they pass once. -#}
{% macro last_pass_at(check_name=none, rules=none) -%}
    {%- set name = check_name or model.name -%}
    {%- if not execute or flags.FULL_REFRESH or target.type != 'duckdb' -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set results = adapter.get_relation(database=target.database, schema='audit', identifier='check_results') -%}
    {%- if results is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- if rules is not none
          and 'rules_digest' not in (adapter.get_columns_in_relation(results) | map(attribute='name') | list) -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set sql -%}
        select cast(max(checked_at) as string) from {{ results }}
        where check_name = '{{ name }}' and target = 'dbt' and status = 'pass'
        {%- if rules is not none %} and rules_digest = '{{ rules }}'{% endif %}
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

{#- A mart that publishes a day-incremental model's rows without its bookkeeping columns (fct_focus_export
   of int_focus_export_rows) copies only the days `upstream` stamped (`x_built_at`) after the mart's
   blocking check `check_name` last passed on it (built_since_last_pass): the days the upstream rebuilt
   since the mart was last built and checked, plus any a failed run left behind. Rows of such a day are
   replaced whole; a day the upstream no longer holds is deleted. The mart keeps no column of its own for
   it, so its table stays what it publishes.

   projection_rebuilds_all(upstream, excluded): true when the mart has to be written whole: on Spark
   (a table there), a first build or `--full-refresh`, or when its columns are not the upstream's less
   `excluded` (names and types, in order: a changed projection). -#}
{% macro projection_rebuilds_all(upstream, excluded) -%}
    {%- if not execute or target.type == 'spark' or not is_incremental() -%}
        {{ return(true) }}
    {%- endif -%}
    {%- set skip = excluded | map('lower') | list -%}
    {%- set wanted = [] -%}
    {%- for c in adapter.get_columns_in_relation(upstream) if c.name | lower not in skip -%}
        {%- do wanted.append((c.name | lower, c.data_type | lower)) -%}
    {%- endfor -%}
    {%- set have = [] -%}
    {%- for c in adapter.get_columns_in_relation(this) -%}
        {%- do have.append((c.name | lower, c.data_type | lower)) -%}
    {%- endfor -%}
    {{ return(wanted != have) }}
{%- endmacro %}

{#- The predicate on the upstream's rows the mart copies (every row when it is written whole). -#}
{% macro projection_scope(upstream, excluded, check_name) -%}
    {%- if projection_rebuilds_all(upstream, excluded) -%}true{%- else -%}{{ built_since_last_pass('x_built_at', check_name) }}{%- endif -%}
{%- endmacro %}

{#- A pre-hook (DuckDB): empties the mart when it is written whole (a changed projection is re-created
   with the new columns first), else deletes the days it copies again and the days the upstream lost.
   `day_expr`: the mart's day of a row; `upstream_day`: the upstream's. -#}
{% macro clear_projection_days(upstream, excluded, check_name, day_expr, upstream_day) -%}
    {%- if execute and is_incremental() and target.type != 'spark' -%}
        {%- if projection_rebuilds_all(upstream, excluded) -%}
            create or replace table {{ this }} as select {{ star_except(excluded) }} from {{ upstream }} where false
        {%- else -%}
            delete from {{ this }}
            where {{ day_expr }} in (select {{ upstream_day }} from {{ upstream }}
                                     where {{ built_since_last_pass('x_built_at', check_name) }})
               or {{ day_expr }} not in (select distinct {{ upstream_day }} from {{ upstream }}
                                         where {{ upstream_day }} is not null)
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}

{#- The same scope for a test of one model's rows (column_constraints): the predicate on the rows of
   `relation` built since the check last passed under the same `rules` (a digest), none (every row) when
   the relation's yml declares no `x_built_at` column (`stamped`: a view over the raw lake, a table
   rebuilt whole) or when last_pass_at gives none. The yml, not the table's columns: every column is
   documented (tests/docs), and asking the database cost a query per test for the ~90 models with no
   stamp. -#}
{% macro rows_built_since_last_pass(relation, rules, stamped, check_name=none) -%}
    {%- if not stamped -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set passed_at = last_pass_at(check_name, rules) -%}
    {%- if passed_at is none -%}
        {{ return(none) }}
    {%- endif -%}
    {{ return("(x_built_at is null or x_built_at > cast('" ~ passed_at ~ "' as timestamp))") }}
{%- endmacro %}
