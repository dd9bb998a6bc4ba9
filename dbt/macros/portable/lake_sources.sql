{#- Where the sources live, per engine. Sources are declared once, in the staging
    `_<family>__sources.yml` files. On DuckDB they are the raw/audit schemas of the ledger file
    itself. On Spark they are external Parquet tables over the lake the pipeline exports
    (warehouse/lake.py: `<lake_root>/<schema>/<table>/`); this hook (on-run-start) registers them
    before any model runs. The lake root is the var `lake_dir`. -#}
{% macro register_lake_sources() -%}
    {{ return(adapter.dispatch('register_lake_sources', 'gpu_ledger')()) }}
{%- endmacro %}

{% macro default__register_lake_sources() -%}{%- endmacro %}

{% macro spark__register_lake_sources() -%}
    {%- if execute -%}
        {%- set lake_root = var('lake_dir', '../warehouse/home/lake') -%}
        {%- set schemas = [] -%}
        {%- for node in graph.sources.values() -%}
            {%- if node.schema not in schemas -%}
                {%- do schemas.append(node.schema) -%}
                {%- do run_query('create database if not exists ' ~ node.schema) -%}
            {%- endif -%}
            {%- set relation = node.schema ~ '.' ~ node.identifier -%}
            {#- External tables: dropping one forgets the definition, never the exported files. -#}
            {%- do run_query('drop table if exists ' ~ relation) -%}
            {%- do run_query("create table " ~ relation ~ " using parquet location '"
                             ~ lake_root ~ "/" ~ node.schema ~ "/" ~ node.identifier ~ "'") -%}
        {%- endfor -%}
    {%- endif -%}
{%- endmacro %}
