{# Every amount in the ledger is exact: DECIMAL(38,12). Rounding happens only at presentation. #}
{% macro money(expr) -%}
    cast({{ expr }} as decimal(38, 12))
{%- endmacro %}

{# A ratio of money to a count (unit costs). Engines divide decimals in floating point, so the
   quotient carries ~15 significant digits before it is stored as DECIMAL(38,12); a zero or null
   denominator gives null (never infinity or zero). #}
{% macro safe_unit_cost(amount, denominator) -%}
    case when coalesce({{ denominator }}, 0) = 0 then null
         else cast(cast({{ amount }} as double) / cast({{ denominator }} as double) as decimal(38, 12)) end
{%- endmacro %}
