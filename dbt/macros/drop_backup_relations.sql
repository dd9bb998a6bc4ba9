{#- An on-run-end hook (DuckDB): drops the `<model>__dbt_backup` tables dbt-duckdb's incremental
   materialization leaves after a full rebuild. It renames the old table to the backup and drops that
   after its commit, in a transaction the node then rolls back, so the drop never lands: every full
   rebuild of an incremental model kept a second copy of it (a year of usage: gigabytes), and a mart's
   backup was published beside the mart. Spark's materializations leave none. -#}
{% macro drop_backup_relations() -%}
    {{ return(adapter.dispatch('drop_backup_relations', 'gpu_ledger')()) }}
{%- endmacro %}

{% macro default__drop_backup_relations() -%}
    {%- if execute -%}
        {%- set found = run_query("select table_schema, table_name from information_schema.tables "
                                  ~ "where table_catalog = current_database() and table_type = 'BASE TABLE' "
                                  ~ "and ends_with(table_name, '__dbt_backup')") -%}
        {%- for row in found.rows -%}
            drop table if exists "{{ row[0] }}"."{{ row[1] }}";
        {% endfor -%}
    {%- endif -%}
{%- endmacro %}

{% macro spark__drop_backup_relations() -%}{%- endmacro %}
