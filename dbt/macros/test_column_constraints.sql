{#-
  The not_null and unique constraints a model's (or seed's) columns declare in yml
  (`constraints: [{type: not_null}, {type: unique}]`), and its model-level unique keys
  (`constraints: [{type: unique, columns: [a, b]}]`), checked by ONE test per model.

  Why not dbt's per-column `not_null` / `unique` tests: each is its own dbt node, and a nightly
  build paid ~40 ms of dbt overhead per node for 327 of them (issue 23). This test asserts exactly
  what they asserted, in one node and one scan for the nulls. A model-level unique key is what the
  `unique_combination` test was: nulls group together, so two rows (null, 'x') are duplicates. Without an enforced contract dbt only
  records constraints; this test is what enforces them (tests/dbt/test_column_constraints.py checks
  that every model declaring a constraint carries it).

  One row per violation: the constraint, the column, the duplicated value (unique) and how many
  rows break it; the failure count (fail_calc) is the number of offending rows, as the per-column
  tests counted. Portable SQL (DuckDB and Spark run the same project).
-#}
{% test column_constraints(model) %}
{{ config(fail_calc = "coalesce(sum(failing_rows), 0)") }}
{%- set ns = namespace(node=none) -%}
{%- set not_null = [] -%}
{%- set unique = [] -%}
{%- set keys = [] -%}
{%- if execute -%}
  {%- for n in graph.nodes.values() -%}
    {%- if n.resource_type in ('model', 'seed') and n.alias == model.identifier and n.schema == model.schema -%}
      {%- set ns.node = n -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if ns.node is none -%}
    {{ exceptions.raise_compiler_error("column_constraints: no model or seed is built as " ~ model) }}
  {%- endif -%}
  {%- for col in ns.node.columns.values() -%}
    {%- for c in col.constraints -%}
      {%- if c.type == 'not_null' -%}{%- do not_null.append(col.name) -%}
      {%- elif c.type == 'unique' -%}{%- do unique.append(col.name) -%}
      {%- else -%}
        {{ exceptions.raise_compiler_error("column_constraints on " ~ ns.node.name ~ "." ~ col.name ~ ": constraint type '" ~ c.type ~ "' is not checked; use not_null or unique, or a data test") }}
      {%- endif -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- for c in ns.node.constraints or [] -%}
    {%- if c.type == 'unique' and c.columns -%}{%- do keys.append(c.columns) -%}
    {%- else -%}
      {{ exceptions.raise_compiler_error("column_constraints on " ~ ns.node.name ~ ": model constraint '" ~ c.type ~ "' is not checked; use {type: unique, columns: [...]}, or a data test") }}
    {%- endif -%}
  {%- endfor -%}
  {%- if not (not_null or unique or keys) -%}
    {{ exceptions.raise_compiler_error("column_constraints on " ~ ns.node.name ~ ": no column declares a not_null or unique constraint") }}
  {%- endif -%}
{%- endif -%}
{%- if not_null %}
{#- One scan counts the nulls of every column; the inline table turns the counts into rows. #}
select 'not_null' as constraint_type, checked.column_name, cast(null as string) as value, checked.failing_rows
from (
    select c.column_name,
        case c.position
        {%- for col in not_null %}
            when {{ loop.index }} then n.nulls_{{ loop.index }}
        {%- endfor %}
        end as failing_rows
    from (
        select
        {%- for col in not_null %}
            sum(case when {{ col }} is null then 1 else 0 end) as nulls_{{ loop.index }}{{ "," if not loop.last }}
        {%- endfor %}
        from {{ model }}
    ) as n
    cross join (values
    {%- for col in not_null %}
        ({{ loop.index }}, '{{ col }}'){{ "," if not loop.last }}
    {%- endfor %}
    ) as c(position, column_name)
) as checked
where checked.failing_rows > 0
{% if unique or keys %}union all{% endif %}
{%- endif %}
{%- for c in unique %}
select 'unique' as constraint_type, '{{ c }}' as column_name, cast({{ c }} as string) as value,
       count(*) as failing_rows
from {{ model }} where {{ c }} is not null group by {{ c }} having count(*) > 1
{% if not loop.last or keys %}union all{% endif %}
{%- endfor %}
{%- for cols in keys %}
select 'unique' as constraint_type, '{{ cols | join(", ") }}' as column_name,
       concat_ws('|', {% for c in cols %}cast({{ c }} as string){{ ", " if not loop.last }}{% endfor %}) as value,
       count(*) as failing_rows
from {{ model }} group by {{ cols | join(", ") }} having count(*) > 1
{% if not loop.last %}union all{% endif %}
{%- endfor %}
{%- if not execute %}
select 1 as failing_rows
{%- endif %}
{% endtest %}
