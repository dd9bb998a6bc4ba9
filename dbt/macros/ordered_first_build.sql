{#- The first build and a `--full-refresh` of a day- or month-incremental model (strategy
   `ordered_delete_insert`, macros/incremental_days.sql) write its rows in the order of its key, as the
   nights' inserts do. Built in the query's own order, every row group of such a table held rows of every
   day and month; a night that replaced the current month (or a day of it) then deleted rows spread over all
   of them, and DuckDB's checkpoint rewrote row groups across the table to reclaim them. The temporary
   tables of incremental runs keep the query's order: the strategy's insert orders those rows.
   dbt dispatches `create_table_as` to the root project's `duckdb__` macro first; `dbt.` names the adapter's. -#}
{% macro duckdb__create_table_as(temporary, relation, compiled_code, language='sql') -%}
    {%- set key = config.get('unique_key') -%}
    {%- if not temporary and language == 'sql' and key is string
          and config.get('incremental_strategy') == 'ordered_delete_insert' -%}
        {%- set compiled_code = 'select * from (\n' ~ compiled_code ~ '\n) as built_rows order by ' ~ key -%}
    {%- endif -%}
    {{ return(dbt.duckdb__create_table_as(temporary, relation, compiled_code, language)) }}
{%- endmacro %}
