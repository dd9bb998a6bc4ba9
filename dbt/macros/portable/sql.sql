{#- Engine differences, in one place. Models call these macros; each dispatches to a
    `duckdb__` or `spark__` implementation (`default__` where the SQL is standard). Nothing else in
    the project may use engine-specific syntax: tests/dbt/test_portable_sql.py greps for it.

    JSON lives in DuckDB's JSON type and in Spark as JSON text; keys are SQL expressions (quote a
    literal key yourself: json_text('labels', "'team'")). -#}

{% macro json_text(expr, key) -%}{{ return(adapter.dispatch('json_text', 'gpu_ledger')(expr, key)) }}{%- endmacro %}
{% macro duckdb__json_text(expr, key) -%}({{ expr }} ->> {{ key }}){%- endmacro %}
{#- Spark reads `'...'` raw here (escapedStringLiterals): the quotes of the path go in a "..." literal. -#}
{% macro spark__json_text(expr, key) -%}get_json_object({{ expr }}, concat("$['", {{ key }}, "']")){%- endmacro %}

{#- The value of a JSON document that is a scalar, as text ('"abc"' -> abc, '0.3' -> 0.3). -#}
{% macro json_scalar_text(expr) -%}{{ return(adapter.dispatch('json_scalar_text', 'gpu_ledger')(expr)) }}{%- endmacro %}
{% macro duckdb__json_scalar_text(expr) -%}({{ expr }} ->> '$'){%- endmacro %}
{% macro spark__json_scalar_text(expr) -%}get_json_object({{ expr }}, '$'){%- endmacro %}

{#- A member of a JSON object as JSON (for a nested lookup). -#}
{% macro json_member(expr, key) -%}{{ return(adapter.dispatch('json_member', 'gpu_ledger')(expr, key)) }}{%- endmacro %}
{% macro duckdb__json_member(expr, key) -%}({{ expr }} -> {{ key }}){%- endmacro %}
{% macro spark__json_member(expr, key) -%}get_json_object({{ expr }}, concat("$['", {{ key }}, "']")){%- endmacro %}

{#- A JSON array of strings as a list of strings. -#}
{% macro json_string_list(expr) -%}{{ return(adapter.dispatch('json_string_list', 'gpu_ledger')(expr)) }}{%- endmacro %}
{% macro duckdb__json_string_list(expr) -%}from_json({{ expr }}, '["VARCHAR"]'){%- endmacro %}
{% macro spark__json_string_list(expr) -%}from_json({{ expr }}, 'array<string>'){%- endmacro %}

{#- A JSON array of objects as a list of JSON documents. -#}
{% macro json_object_list(expr) -%}{{ return(adapter.dispatch('json_object_list', 'gpu_ledger')(expr)) }}{%- endmacro %}
{% macro duckdb__json_object_list(expr) -%}from_json({{ expr }}, '["JSON"]'){%- endmacro %}
{% macro spark__json_object_list(expr) -%}from_json({{ expr }}, 'array<string>'){%- endmacro %}

{#- The keys of a JSON object, one row each (a set-returning select item). -#}
{% macro json_keys_exploded(expr) -%}{{ return(adapter.dispatch('json_keys_exploded', 'gpu_ledger')(expr)) }}{%- endmacro %}
{% macro duckdb__json_keys_exploded(expr) -%}unnest(json_keys({{ expr }})){%- endmacro %}
{% macro spark__json_keys_exploded(expr) -%}explode(map_keys(from_json({{ expr }}, 'map<string,string>'))){%- endmacro %}

{#- JSON text that holds a JSON object, else NULL (a provider column that should be an object but is not). -#}
{% macro json_object_or_null(expr) -%}{{ return(adapter.dispatch('json_object_or_null', 'gpu_ledger')(expr)) }}{%- endmacro %}
{% macro duckdb__json_object_or_null(expr) -%}
    case when json_valid({{ expr }}) and starts_with(ltrim({{ expr }}), '{') then {{ expr }} end
{%- endmacro %}
{% macro spark__json_object_or_null(expr) -%}
    case when from_json({{ expr }}, 'map<string,string>') is not null then {{ expr }} end
{%- endmacro %}

{#- One row per list element (a set-returning select item; at most one per select on Spark). -#}
{% macro explode_list(expr) -%}{{ return(adapter.dispatch('explode_list', 'gpu_ledger')(expr)) }}{%- endmacro %}
{% macro duckdb__explode_list(expr) -%}unnest({{ expr }}){%- endmacro %}
{% macro spark__explode_list(expr) -%}explode({{ expr }}){%- endmacro %}

{#- A list literal from SQL expressions. -#}
{% macro list_of(items) -%}{{ return(adapter.dispatch('list_of', 'gpu_ledger')(items)) }}{%- endmacro %}
{% macro duckdb__list_of(items) -%}[{{ items | join(', ') }}]{%- endmacro %}
{% macro spark__list_of(items) -%}array({{ items | join(', ') }}){%- endmacro %}

{#- The distinct elements of a list. -#}
{% macro list_distinct(expr) -%}{{ return(adapter.dispatch('list_distinct', 'gpu_ledger')(expr)) }}{%- endmacro %}
{% macro duckdb__list_distinct(expr) -%}list_distinct({{ expr }}){%- endmacro %}
{% macro spark__list_distinct(expr) -%}array_distinct({{ expr }}){%- endmacro %}

{#- Integers first..last inclusive as a list (empty when last < first). -#}
{% macro int_series(first, last) -%}{{ return(adapter.dispatch('int_series', 'gpu_ledger')(first, last)) }}{%- endmacro %}
{% macro duckdb__int_series(first, last) -%}generate_series({{ first }}, {{ last }}){%- endmacro %}
{% macro spark__int_series(first, last) -%}
    case when {{ last }} >= {{ first }} then sequence({{ first }}, {{ last }}) else array() end
{%- endmacro %}

{#- Timestamps first..last inclusive, one hour apart, as a list (empty when last < first). -#}
{% macro hour_series(first, last) -%}{{ return(adapter.dispatch('hour_series', 'gpu_ledger')(first, last)) }}{%- endmacro %}
{% macro duckdb__hour_series(first, last) -%}generate_series({{ first }}, {{ last }}, interval 1 hour){%- endmacro %}
{% macro spark__hour_series(first, last) -%}
    case when {{ last }} >= {{ first }} then sequence({{ first }}, {{ last }}, interval 1 hour) else array() end
{%- endmacro %}

{#- Timestamps first..last inclusive, one day apart, as a list (empty when last < first). -#}
{% macro day_series(first, last) -%}{{ return(adapter.dispatch('day_series', 'gpu_ledger')(first, last)) }}{%- endmacro %}
{% macro duckdb__day_series(first, last) -%}generate_series({{ first }}, {{ last }}, interval 1 day){%- endmacro %}
{% macro spark__day_series(first, last) -%}
    case when {{ last }} >= {{ first }} then sequence({{ first }}, {{ last }}, interval 1 day) else array() end
{%- endmacro %}

{#- Microseconds since 1970-01-01 UTC; differences of these are exact durations. -#}
{% macro epoch_us(ts) -%}{{ return(adapter.dispatch('epoch_us', 'gpu_ledger')(ts)) }}{%- endmacro %}
{% macro duckdb__epoch_us(ts) -%}epoch_us({{ ts }}){%- endmacro %}
{% macro spark__epoch_us(ts) -%}unix_micros(cast({{ ts }} as timestamp)){%- endmacro %}

{% macro hours_between(start_at, end_at) -%}
    (({{ gpu_ledger.epoch_us(end_at) }} - {{ gpu_ledger.epoch_us(start_at) }}) / 3600000000.0)
{%- endmacro %}

{% macro seconds_between(start_at, end_at) -%}
    (({{ gpu_ledger.epoch_us(end_at) }} - {{ gpu_ledger.epoch_us(start_at) }}) / 1000000.0)
{%- endmacro %}

{#- A timestamp as ISO text with microseconds, the same on every engine (for ids and keys). -#}
{% macro ts_text(ts) -%}{{ return(adapter.dispatch('ts_text', 'gpu_ledger')(ts)) }}{%- endmacro %}
{% macro duckdb__ts_text(ts) -%}strftime(cast({{ ts }} as timestamp), '%Y-%m-%dT%H:%M:%S.%f'){%- endmacro %}
{% macro spark__ts_text(ts) -%}date_format({{ ts }}, "yyyy-MM-dd'T'HH:mm:ss.SSSSSS"){%- endmacro %}

{#- Regular-expression search (true when the pattern matches anywhere). -#}
{% macro regex_search(expr, pattern) -%}{{ return(adapter.dispatch('regex_search', 'gpu_ledger')(expr, pattern)) }}{%- endmacro %}
{% macro duckdb__regex_search(expr, pattern) -%}regexp_matches({{ expr }}, {{ pattern }}){%- endmacro %}
{% macro spark__regex_search(expr, pattern) -%}regexp_like({{ expr }}, {{ pattern }}){%- endmacro %}

{#- Every match of a pattern (whole match), as a list. -#}
{% macro regex_all(expr, pattern) -%}regexp_extract_all({{ expr }}, {{ pattern }}, 0){%- endmacro %}

{#- Split on a literal one-character separator. -#}
{% macro split_text(expr, separator) -%}{{ return(adapter.dispatch('split_text', 'gpu_ledger')(expr, separator)) }}{%- endmacro %}
{% macro duckdb__split_text(expr, separator) -%}string_split({{ expr }}, '{{ separator }}'){%- endmacro %}
{% macro spark__split_text(expr, separator) -%}split({{ expr }}, '[{{ separator }}]'){%- endmacro %}

{#- A dotted version ('1.10.2') as a list of integers that sorts numerically. -#}
{% macro version_sort_key(expr) -%}{{ return(adapter.dispatch('version_sort_key', 'gpu_ledger')(expr)) }}{%- endmacro %}
{% macro duckdb__version_sort_key(expr) -%}list_transform(string_split({{ expr }}, '.'), v -> try_cast(v as integer)){%- endmacro %}
{% macro spark__version_sort_key(expr) -%}transform(split({{ expr }}, '[.]'), v -> try_cast(v as int)){%- endmacro %}

{#- Distinct values joined in sorted order: string_agg(distinct x, sep order by x). `filter` is an
    optional condition on the rows aggregated. -#}
{% macro sorted_distinct_join(expr, separator, filter=none) -%}
    {{ return(adapter.dispatch('sorted_distinct_join', 'gpu_ledger')(expr, separator, filter)) }}
{%- endmacro %}
{% macro duckdb__sorted_distinct_join(expr, separator, filter) -%}
    string_agg(distinct {{ expr }}, '{{ separator }}' order by {{ expr }}){% if filter %} filter (where {{ filter }}){% endif %}
{%- endmacro %}
{% macro spark__sorted_distinct_join(expr, separator, filter) -%}
    {#- string_agg(...) within group (...) filter (...) trips a ClassCastException in Spark 4.3. -#}
    nullif(array_join(array_sort(collect_set({% if filter %}case when {{ filter }} then {{ expr }} end{% else %}{{ expr }}{% endif %})), '{{ separator }}'), '')
{%- endmacro %}

{#- Every column but some: `select {{ star_except(['a', 'b']) }}` or star_except([...], 'alias'). -#}
{% macro star_except(columns, relation_alias=none) -%}
    {{ return(adapter.dispatch('star_except', 'gpu_ledger')(columns, relation_alias)) }}
{%- endmacro %}
{% macro duckdb__star_except(columns, relation_alias) -%}
    {% if relation_alias %}{{ relation_alias }}.{% endif %}* exclude ({{ columns | join(', ') }})
{%- endmacro %}
{% macro spark__star_except(columns, relation_alias) -%}
    {% if relation_alias %}{{ relation_alias }}.{% endif %}* except ({{ columns | join(', ') }})
{%- endmacro %}

{#- The value of `expr` on the row where `order_expr` is largest / smallest (an aggregate). -#}
{% macro value_at_max(expr, order_expr) -%}max_by({{ expr }}, {{ order_expr }}){%- endmacro %}
{% macro value_at_min(expr, order_expr) -%}min_by({{ expr }}, {{ order_expr }}){%- endmacro %}

{#- A timestamp plus a number of seconds (fractional seconds kept to the microsecond). -#}
{% macro add_seconds(ts, seconds) -%}{{ return(adapter.dispatch('add_seconds', 'gpu_ledger')(ts, seconds)) }}{%- endmacro %}
{% macro duckdb__add_seconds(ts, seconds) -%}({{ ts }} + to_microseconds(cast(({{ seconds }}) * 1000000 as bigint))){%- endmacro %}
{% macro spark__add_seconds(ts, seconds) -%}timestamp_micros(unix_micros({{ ts }}) + cast(({{ seconds }}) * 1000000 as bigint)){%- endmacro %}

{#- Number of elements of a list (null for a null list). -#}
{% macro list_length(expr) -%}{{ return(adapter.dispatch('list_length', 'gpu_ledger')(expr)) }}{%- endmacro %}
{% macro duckdb__list_length(expr) -%}len({{ expr }}){%- endmacro %}
{% macro spark__list_length(expr) -%}case when {{ expr }} is not null then size({{ expr }}) end{%- endmacro %}

{#- Aggregate: the distinct non-null values as a sorted list. -#}
{% macro sorted_distinct_list(expr) -%}{{ return(adapter.dispatch('sorted_distinct_list', 'gpu_ledger')(expr)) }}{%- endmacro %}
{% macro duckdb__sorted_distinct_list(expr) -%}list(distinct {{ expr }} order by {{ expr }}) filter (where {{ expr }} is not null){%- endmacro %}
{% macro spark__sorted_distinct_list(expr) -%}array_sort(collect_set({{ expr }})){%- endmacro %}

{#- In a FROM clause, after a comma: one row per element of a list of the preceding relation
    (`from t, {{ lateral_explode('t.items') }} as n(item)`). -#}
{% macro lateral_explode(expr) -%}{{ return(adapter.dispatch('lateral_explode', 'gpu_ledger')(expr)) }}{%- endmacro %}
{% macro duckdb__lateral_explode(expr) -%}unnest({{ expr }}){%- endmacro %}
{% macro spark__lateral_explode(expr) -%}lateral explode({{ expr }}){%- endmacro %}

{#- Select items: one row per list element, with its element and its 1-based position. -#}
{% macro explode_with_position(expr, value_alias, position_alias) -%}
    {{ return(adapter.dispatch('explode_with_position', 'gpu_ledger')(expr, value_alias, position_alias)) }}
{%- endmacro %}
{% macro duckdb__explode_with_position(expr, value_alias, position_alias) -%}
    unnest({{ expr }}) as {{ value_alias }}, generate_subscripts({{ expr }}, 1) as {{ position_alias }}
{%- endmacro %}
{% macro spark__explode_with_position(expr, value_alias, position_alias) -%}
    posexplode({{ expr }}) as ({{ position_alias }}, {{ value_alias }})
{%- endmacro %}

{#- `select <columns> from a union all select <columns> from b ...`: a union matched by column name
    (DuckDB's UNION ALL BY NAME; Spark SQL has none), with the column list written once. -#}
{% macro union_all_columns(relations, columns) -%}
    {%- for relation in relations %}
    select {{ columns | join(', ') }} from {{ relation }}
    {%- if not loop.last %}
    union all
    {%- endif %}
    {%- endfor %}
{%- endmacro %}

{#- An order-free digest of a group's rows, as text: the xor of a 64-bit hash of `columns` over the rows.
    The rows must be distinct on `columns` (two equal rows cancel out): include the input's grain. For a
    day-incremental model's change detection on a small input kept without build stamps: a per-day
    digest of int_gpu_idle_hourly's 96k rows at 365 days is 0.008 CPU s this way, 0.16 as md5 over the
    sorted rows' text. -#}
{% macro rows_hash_digest(columns) -%}{{ return(adapter.dispatch('rows_hash_digest', 'gpu_ledger')(columns)) }}{%- endmacro %}
{% macro duckdb__rows_hash_digest(columns) -%}cast(bit_xor(hash({{ columns | join(', ') }})) as string){%- endmacro %}
{% macro spark__rows_hash_digest(columns) -%}cast(bit_xor(xxhash64({{ columns | join(', ') }})) as string){%- endmacro %}
