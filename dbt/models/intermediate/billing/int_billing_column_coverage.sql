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

non_null_counts as (
    -- DuckDB COLUMNS(*): one non-null count per raw column, keeping the column's name.
    select
        _file_hash as x_file_hash,
        x_focus_version,
        any_value(_source_file) as x_source_file,
        any_value(x_source_format) as x_source_format,
        count(*) as x_rows,
        count(columns(* exclude (_file_hash, x_focus_version, _source_file, x_source_format)))
    from charges
    group by _file_hash, x_focus_version
),

per_column as (
    unpivot non_null_counts
    on columns(* exclude (x_file_hash, x_focus_version, x_source_file, x_source_format, x_rows))
    into name column_name value non_null_rows
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
