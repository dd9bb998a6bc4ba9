{{ config(
    materialized=('table' if target.type == 'spark' else 'incremental'),
    incremental_strategy='append',
    on_schema_change='ignore',
    pre_hook=[{"sql": "{{ gpu_ledger.clear_projection_days(ref('int_focus_export_rows'), gpu_ledger.focus_export_build_columns(), 'assert_focus_export_partitions_ledger', 'cast(ChargePeriodStart as date)', 'x_charge_day') }}",
               "transaction": false}]
) }}
-- The published ledger as a FOCUS 1.3 dataset (`gpu-ledger export focus` writes it to files): the rows
-- of int_focus_export_rows (one per part of a ledger line; the split and its arithmetic are described
-- there), which a nightly refresh rebuilds by day, without the columns kept for that build. On DuckDB
-- the copy follows the days int_focus_export_rows rebuilt (macros/check_scope.sql
-- clear_projection_days): those stamped since this mart's partition check last passed.
select {{ star_except(focus_export_build_columns()) }}
from {{ ref('int_focus_export_rows') }}
where {{ projection_scope(ref('int_focus_export_rows'), focus_export_build_columns(),
                          'assert_focus_export_partitions_ledger') }}
