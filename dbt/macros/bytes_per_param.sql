{# Bytes per weight parameter for a precision / quantisation name (bf16 when unknown). #}
{% macro bytes_per_param(precision) -%}
    case lower(coalesce({{ precision }}, 'bf16'))
        when 'fp32' then 4.0 when 'tf32' then 4.0
        when 'fp8' then 1.0 when 'int8' then 1.0
        when 'int4' then 0.5 when 'fp4' then 0.5 when 'nf4' then 0.5
        else 2.0
    end
{%- endmacro %}
