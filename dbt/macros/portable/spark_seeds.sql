{#- Seeds on Spark. dbt-spark's session mode pastes seed values between single quotes without
    escaping them (a value like "mapping's" breaks the statement) and turns empty cells into the
    text 'None'. This renders each value as a literal itself: null for an empty cell, a quoted
    string otherwise (a value holding a single quote is written between double quotes, which
    Spark also reads as a string). The cast to the column type is unchanged. -#}
{% macro spark_seed_literal(value) -%}
    {%- if value is none -%}null
    {%- else -%}
        {%- set text = value | string -%}
        {%- if "'" not in text -%}'{{ text }}'
        {%- elif '"' not in text -%}"{{ text }}"
        {%- else -%}{{ exceptions.raise_compiler_error("seed value holds both quote characters: " ~ text) }}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}

{% macro spark__load_csv_rows(model, agate_table) %}
    {% set column_override = model['config'].get('column_types', {}) %}
    {% set statements = [] %}
    {% for chunk in agate_table.rows | batch(get_batch_size()) %}
        {% set sql %}
            insert into {{ this.render() }} values
            {% for row in chunk -%}
                ({%- for col_name in agate_table.column_names -%}
                    {%- set type = column_override.get(col_name, adapter.convert_type(agate_table, loop.index0)) -%}
                    cast({{ spark_seed_literal(row[loop.index0]) }} as {{ type }})
                    {%- if not loop.last %},{% endif -%}
                {%- endfor -%})
                {%- if not loop.last %},{% endif %}
            {%- endfor %}
        {% endset %}
        {% do adapter.add_query(sql, abridge_sql_log=True) %}
        {% if loop.index0 == 0 %}{% do statements.append(sql) %}{% endif %}
    {% endfor %}
    {{ return(statements[0]) }}
{% endmacro %}
