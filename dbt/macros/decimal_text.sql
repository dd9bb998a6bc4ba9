{#- A DECIMAL as JSON/number text that reads the same on every engine: Spark writes a zero with a
    scale as `0E-12` (Java BigDecimal), DuckDB as `0.000000000000`; both write '0' through here. -#}
{% macro decimal_text(expr) -%}
    case when {{ expr }} = 0 then '0' else cast({{ expr }} as string) end
{%- endmacro %}
