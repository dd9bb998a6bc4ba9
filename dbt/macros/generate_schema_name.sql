{# Layer schemas are named exactly (staging, intermediate, marts, reference), not prefixed
   with the target schema, so the publish step and the dashboards can name them. #}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}{{ target.schema }}{%- else -%}{{ custom_schema_name | trim }}{%- endif -%}
{%- endmacro %}
