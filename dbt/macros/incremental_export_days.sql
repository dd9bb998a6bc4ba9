{#- Helpers for the FOCUS export's day-incremental model (int_focus_export_rows), beside
    macros/incremental_days.sql. -#}

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
