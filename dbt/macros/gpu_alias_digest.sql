{# The alias seed as one text (its rows sorted), for digests of what a model applies across history
   (int_usage_history_key): a change of any alias changes it. Models join the seed only through
   join_gpu_alias; this reads it whole, never joins it. #}
{% macro gpu_alias_digest() -%}
    select {{ sorted_distinct_join(row_text('a'), '|') }} as part from {{ ref('gpu_aliases') }} as a
{%- endmacro %}
