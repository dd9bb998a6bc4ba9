-- Coverage of the FOCUS mandatory columns in every landed billing file: for each file and its
-- declared/inferred x_focus_version, the share of null values in each column that version makes
-- mandatory (seed focus_mandatory_columns). A column the file does not have at all is null on
-- every row, so its share is 1. Legacy exports (mapped to FOCUS names by sources/billing) are
-- held to the 1.0 list. Read from raw, so files of every delivery are covered.
with charges as (
    select * from {{ source('billing', 'billing_charges') }}
),

mandatory as (
    select * from {{ ref('focus_mandatory_columns') }}
),

{%- set counted = [] %}
{%- if execute %}
    {%- for column in adapter.get_columns_in_relation(source('billing', 'billing_charges')) %}
        {%- if column.name not in ('_file_hash', 'x_focus_version', '_source_file', 'x_source_format') %}
            {%- do counted.append(column.name) %}
        {%- endif %}
    {%- endfor %}
{%- endif %}

non_null_counts as (
    -- one non-null count per raw column (the column list is read from the table at run time)
    select
        _file_hash as x_file_hash,
        x_focus_version,
        min(_source_file) as x_source_file,
        min(x_source_format) as x_source_format,
        count(*) as x_rows
        {%- for name in counted %},
        count({{ name }}) as {{ name }}
        {%- endfor %}
    from charges
    group by _file_hash, x_focus_version
),

per_column as (
    select x_file_hash, x_focus_version, x_source_file, x_source_format, x_rows, column_name, non_null_rows
    from non_null_counts
    unpivot (non_null_rows for column_name in ({{ counted | join(', ') if counted else '_no_column' }}))
),

final as (
    select
        per_column.x_file_hash,
        per_column.x_focus_version,
        mandatory.focus_version as x_checked_against_version,
        per_column.x_source_file,
        per_column.x_source_format,
        per_column.column_name,
        mandatory.nulls_allowed,
        per_column.x_rows,
        per_column.x_rows - per_column.non_null_rows as null_rows,
        cast(per_column.x_rows - per_column.non_null_rows as double) / per_column.x_rows as null_share
    from per_column
    inner join mandatory
        on mandatory.column_name = per_column.column_name
        and mandatory.focus_version = case
            when per_column.x_focus_version like 'legacy-%' or per_column.x_focus_version is null then '1.0'
            else per_column.x_focus_version
        end
)

select * from final
