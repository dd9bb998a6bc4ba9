{#- Helpers for the day-incremental models whose history-wide inputs are the registry and the code
    (int_focus_export_rows, int_api_requests_allocated), beside macros/incremental_days.sql. -#}

{#- The SQL of a history key (one row, x_history_key) for the model `unique_id`: md5 over the registry
    files' content hashes (teams, workloads, mappings, policies) and upstream_code_digest(unique_id). A
    model's <name>_history_key is this; history_days rebuilds every day when it moves. -#}
{% macro registry_and_code_key(unique_id) -%}
    select md5(concat_ws('#', coalesce(registry_files.part, ''), '{{ upstream_code_digest(unique_id) }}')) as x_history_key
    from (
        select {{ sorted_distinct_join('file_hash', ',') }} as part
        from {{ ref('stg_audit__file_loads') }}
        where family = 'registry'
    ) as registry_files
{%- endmacro %}

{#- md5 over the checksums (file contents) of the models and seeds `unique_id` is built from, itself
    included: a changed rule or seed upstream of it can move rows of any day. -#}
{% macro upstream_code_digest(unique_id) -%}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set seen = [unique_id] -%}
    {#- breadth-first over depends_on; a path through the project is far shorter than 64 steps -#}
    {%- for _ in range(64) -%}
        {%- for uid in seen -%}
            {%- set node = graph.nodes.get(uid) -%}
            {%- if node -%}
                {%- for parent in node.depends_on.nodes if parent not in seen and parent in graph.nodes -%}
                    {%- do seen.append(parent) -%}
                {%- endfor -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- set parts = [] -%}
    {%- for uid in seen | sort -%}
        {%- set node = graph.nodes[uid] -%}
        {%- if node.resource_type in ('model', 'seed') -%}
            {%- do parts.append(uid ~ ':' ~ node.checksum.checksum) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(local_md5(parts | join(','))) }}
{%- endmacro %}

{#- A pre-hook: DuckDB's delete+insert replaces the days a run rebuilds that still hold rows; a day
    whose every row is gone from `days_sql` (a restated bill without that day) is deleted here. -#}
{% macro clear_vanished_days(day_column, days_sql) -%}
    {%- if execute and is_incremental() and target.type != 'spark' -%}
        delete from {{ this }} where {{ day_column }} not in ({{ days_sql }})
    {%- endif -%}
{%- endmacro %}

{#- The columns int_focus_export_rows keeps for its incremental build and fct_focus_export leaves out. -#}
{% macro focus_export_build_columns() -%}
    {{ return(['x_charge_day', 'x_split_method', 'x_split_workload_id', 'x_split_weight', 'x_split_weight_total',
               'x_split_share', 'x_split_share_rank', 'x_split_idle_share', 'x_split_portion_fraction',
               'x_loaded_at', 'x_history_key', 'x_built_at']) }}
{%- endmacro %}
