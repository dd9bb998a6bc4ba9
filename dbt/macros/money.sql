{# Every amount in the ledger is exact: DECIMAL(38,12). Rounding happens only at presentation. #}
{% macro money(expr) -%}
    cast({{ expr }} as decimal(38, 12))
{%- endmacro %}

{# amount x factor stored as `type` (money by default). A factor of exactly 1 gives the amount itself, the same
   value: DuckDB rescales a DECIMAL(38,24) product to (38,12) by 128-bit division at ~2 us a value (1M values:
   0.02 s to multiply, 1.2 s to rescale), and most shares of a split are 1 (one team per portion of a bill line). #}
{% macro times_factor(amount, factor, type='decimal(38, 12)') -%}
    case when {{ factor }} = 1 then cast({{ amount }} as {{ type }}) else cast({{ amount }} * {{ factor }} as {{ type }}) end
{%- endmacro %}

{# A ratio of money to a count (unit costs). Engines divide decimals in floating point, so the
   quotient carries ~15 significant digits before it is stored as DECIMAL(38,12); a zero or null
   denominator gives null (never infinity or zero). #}
{% macro safe_unit_cost(amount, denominator) -%}
    case when coalesce({{ denominator }}, 0) = 0 then null
         else cast(cast({{ amount }} as double) / cast({{ denominator }} as double) as decimal(38, 12)) end
{%- endmacro %}
