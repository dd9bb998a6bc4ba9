{#-
  The not_null and unique constraints a model's (or seed's) columns declare in yml
  (`constraints: [{type: not_null}, {type: unique}]`), its model-level unique keys
  (`constraints: [{type: unique, columns: [a, b]}]`), and its columns' value checks
  (`config: {meta: {checks: {...}}}`), checked by ONE test per model.

  Why not dbt's per-column tests: each is its own dbt node, and a nightly build paid ~40 ms of dbt
  overhead per node for 327 not_null/unique tests and 70 value tests. This test asserts
  what they asserted, in one node and one scan for the nulls and the values. A model-level unique
  key is what the `unique_combination` test was: nulls group together, so two rows (null, 'x') are
  duplicates. Without an enforced contract dbt only records constraints; this test is what enforces
  them (tests/dbt/test_column_constraints.py checks that every model declaring a constraint or a
  check carries it).

  Value checks (a NULL passes each, as it passed the generic test of the same name):
    accepted_values: [a, b]                          the value is one of these strings
    value_between: {min_value: 0, max_value: 100}    within the bounds, `tolerance` (1e-6) of slack
    greater_than_zero: true                          strictly positive
    currency_is_known: true                          an ISO 4217 code of known_currencies()

  Foreign keys, the test's `relationships` argument (what dbt's `relationships` test checked, one node
  each: 25 of a refresh's 265 dbt nodes, each also a Dagster asset check with three events, and on
  Spark a query of its own):
    - column_constraints:
        name: column_constraints_<model>_        (the name the test has without arguments)
        arguments:
          relationships:
            - {column: gpu_model, to: ref('gpu_catalog'), field: gpu_model}
            - {column: gpu_model, to: ref('gpu_catalog'), field: gpu_model, where: "is_mapped"}
  A non-null value with no parent row fails, once per row; `where` keeps only the child rows it
  selects. The ref in the argument makes dbt build the parent before the test, as it did for the
  generic test. A relationship of another severity (a warning) stays a `relationships` test.

  Nightly scope (macros/check_scope.sql rows_built_since_last_pass): on a model whose rows carry the
  build stamp `x_built_at`, once the test has passed, the nulls and values are read on the rows built
  since that pass only, and a unique key on every row sharing a key with one of them (the rebuilt keys
  joined to the whole table on the key: a new row repeating an old row's key still fails; two old rows
  were compared when the test passed and no build touched them since). The relationships read every
  child row: a parent that lost a row orphans old children. No stamp, no pass under the same rules (the
  digest the SQL carries as `/* check rules: <md5> */`: a check added in yml reads every row until it
  passes), `--full-refresh` or Spark: every row.

  One row per violation: the constraint, the column, the duplicated value (unique) and how many
  rows break it (the orphan value for relationships); the failure count (fail_calc) is the number of
  offending rows. Portable SQL (DuckDB and Spark run the same project).
-#}
{% test column_constraints(model, relationships=[]) %}
{{ config(fail_calc = "coalesce(sum(failing_rows), 0)") }}
{%- set ns = namespace(node=none, scope=none, rules=none) -%}
{%- set not_null = [] -%}
{%- set unique = [] -%}
{%- set keys = [] -%}
{%- set rules = [] -%}
{%- if execute -%}
  {#- The node by its id first (a model or seed named as its relation); the walk over every node of the
      graph, once per test, only for one aliased to another name. -#}
  {%- for kind in ('model', 'seed') if ns.node is none -%}
    {%- set n = graph.nodes.get(kind ~ '.' ~ project_name ~ '.' ~ model.identifier) -%}
    {%- if n and n.alias == model.identifier and n.schema == model.schema -%}{%- set ns.node = n -%}{%- endif -%}
  {%- endfor -%}
  {%- for n in graph.nodes.values() if ns.node is none -%}
    {%- if n.resource_type in ('model', 'seed') and n.alias == model.identifier and n.schema == model.schema -%}
      {%- set ns.node = n -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if ns.node is none -%}
    {{ exceptions.raise_compiler_error("column_constraints: no model or seed is built as " ~ model) }}
  {%- endif -%}
  {%- for col in ns.node.columns.values() -%}
    {%- for kind, arg in ((col.config or {}).get('meta') or col.meta or {}).get('checks', {}).items() -%}
      {%- if kind == 'accepted_values' -%}
        {%- set quoted = [] -%}
        {%- for v in arg -%}{%- do quoted.append("'" ~ (v | string | replace("'", "''")) ~ "'") -%}{%- endfor -%}
        {%- do rules.append((kind, col.name, col.name ~ " not in (" ~ quoted | join(", ") ~ ")")) -%}
      {%- elif kind == 'value_between' -%}
        {%- set tol = arg.get('tolerance', 0.000001) -%}
        {%- set bad = [] -%}
        {%- if arg.get('min_value') is not none -%}{%- do bad.append(col.name ~ " < " ~ arg['min_value'] ~ " - " ~ tol) -%}{%- endif -%}
        {%- if arg.get('max_value') is not none -%}{%- do bad.append(col.name ~ " > " ~ arg['max_value'] ~ " + " ~ tol) -%}{%- endif -%}
        {%- if not bad -%}
          {{ exceptions.raise_compiler_error("column_constraints on " ~ ns.node.name ~ "." ~ col.name ~ ": value_between needs min_value or max_value") }}
        {%- endif -%}
        {%- do rules.append((kind, col.name, bad | join(" or "))) -%}
      {%- elif kind == 'greater_than_zero' -%}
        {%- do rules.append((kind, col.name, col.name ~ " <= 0")) -%}
      {%- elif kind == 'currency_is_known' -%}
        {%- set quoted = [] -%}
        {%- for v in known_currencies() -%}{%- do quoted.append("'" ~ v ~ "'") -%}{%- endfor -%}
        {%- do rules.append((kind, col.name, col.name ~ " not in (" ~ quoted | join(", ") ~ ")")) -%}
      {%- else -%}
        {{ exceptions.raise_compiler_error("column_constraints on " ~ ns.node.name ~ "." ~ col.name ~ ": check '" ~ kind ~ "' is not known; use accepted_values, value_between, greater_than_zero or currency_is_known") }}
      {%- endif -%}
    {%- endfor -%}
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
  {%- for r in relationships -%}
    {%- if r is not mapping or not (r.get('column') and r.get('to') and r.get('field'))
          or (r.keys() | reject('in', ['column', 'to', 'field', 'where']) | list) -%}
      {{ exceptions.raise_compiler_error("column_constraints on " ~ ns.node.name ~ ": each relationships entry is {column, to: ref(...), field[, where]}; got " ~ r) }}
    {%- endif -%}
  {%- endfor -%}
  {%- if not (not_null or unique or keys or rules or relationships) -%}
    {{ exceptions.raise_compiler_error("column_constraints on " ~ ns.node.name ~ ": no column declares a not_null or unique constraint or a check") }}
  {%- endif -%}
  {%- for col in not_null -%}{%- do rules.insert(loop.index0, ('not_null', col, col ~ " is null")) -%}{%- endfor -%}
  {%- set ns.rules = local_md5([not_null, unique, keys, rules, relationships] | string) -%}
  {%- set ns.scope = rows_built_since_last_pass(model, ns.rules, stamped='x_built_at' in ns.node.columns) -%}
{%- endif -%}
{#- The rows the null and value rules read, and the keys whose rows the unique rules compare (see above). -#}
{%- set built = model if ns.scope is none else "(select * from " ~ model ~ " where " ~ ns.scope ~ ") as built_rows" -%}
{%- if ns.rules %}/* check rules: {{ ns.rules }} */{% endif %}
{%- if rules %}
{#- One scan counts the rows breaking each rule (nulls, values); the inline table turns the counts into rows. #}
select checked.constraint_type, checked.column_name, cast(null as string) as value, checked.failing_rows
from (
    select c.constraint_type, c.column_name,
        case c.position
        {%- for r in rules %}
            when {{ loop.index }} then n.failing_{{ loop.index }}
        {%- endfor %}
        end as failing_rows
    from (
        select
        {%- for r in rules %}
            sum(case when {{ r[2] }} then 1 else 0 end) as failing_{{ loop.index }}{{ "," if not loop.last }}
        {%- endfor %}
        from {{ built }}
    ) as n
    cross join (values
    {%- for r in rules %}
        ({{ loop.index }}, '{{ r[0] }}', '{{ r[1] }}'){{ "," if not loop.last }}
    {%- endfor %}
    ) as c(position, constraint_type, column_name)
) as checked
where checked.failing_rows > 0
{% if unique or keys or (relationships and execute) %}union all{% endif %}
{%- endif %}
{%- for c in unique %}
select 'unique' as constraint_type, '{{ c }}' as column_name, cast({{ c }} as string) as value,
       count(*) as failing_rows
from {{ model }} where {{ c }} is not null
{%- if ns.scope is not none %} and {{ c }} in (select {{ c }} from {{ built }}){% endif %}
group by {{ c }} having count(*) > 1
{% if not loop.last or keys or (relationships and execute) %}union all{% endif %}
{%- endfor %}
{%- for cols in keys %}
select 'unique' as constraint_type, '{{ cols | join(", ") }}' as column_name,
       concat_ws('|', {% for c in cols %}cast(whole.{{ c }} as string){{ ", " if not loop.last }}{% endfor %}) as value,
       count(*) as failing_rows
from {{ model }} as whole
{%- if ns.scope is not none %}
{#- nulls group together: a nullable key column matches by `is not distinct from`; a not_null one by `=`,
    which DuckDB's join also uses to skip the table's row groups outside the rebuilt keys' range #}
inner join (select distinct {{ cols | join(", ") }} from {{ built }}) as rebuilt
    on {% for c in cols %}whole.{{ c }} {{ "=" if c in not_null else "is not distinct from" }} rebuilt.{{ c }}{{ " and " if not loop.last }}{% endfor %}
{%- endif %}
group by {% for c in cols %}whole.{{ c }}{{ ", " if not loop.last }}{% endfor %} having count(*) > 1
{% if not loop.last or (relationships and execute) %}union all{% endif %}
{%- endfor %}
{%- if execute %}
{%- for r in relationships %}
{#- dbt's own `relationships` test SQL (one row per non-null child value with no parent row), counted
    per value; `where` narrows the child rows it reads. #}
{%- set child = model if not r.get('where') else "(select * from " ~ model ~ " where " ~ r.where ~ ") as child_rows" %}
select 'relationships' as constraint_type, '{{ r.column }}' as column_name, cast(orphans.from_field as string) as value,
       count(*) as failing_rows
from ({{ adapter.dispatch('test_relationships', 'dbt')(child, r.column, r.to, r.field) }}) as orphans
group by orphans.from_field
{% if not loop.last %}union all{% endif %}
{%- endfor %}
{%- endif %}
{%- if not execute %}
select 1 as failing_rows
{%- endif %}
{% endtest %}
