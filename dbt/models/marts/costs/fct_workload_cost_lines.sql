{{ config(
    materialized=('table' if target.type == 'spark' else 'incremental'),
    incremental_strategy='append',
    on_schema_change='ignore',
    pre_hook=[{"sql": "{{ gpu_ledger.clear_projection_days(ref('int_workload_cost_lines'), gpu_ledger.cost_lines_build_columns(), 'column_constraints_fct_workload_cost_lines_', 'period', 'period') }}",
               "transaction": false}]
) }}
-- The cost lines behind every unit cost, published so each number traces to its source rows (without the
-- columns int_workload_cost_lines keeps for its month-incremental build). On DuckDB the copy follows the
-- months int_workload_cost_lines rebuilt (macros/check_scope.sql clear_projection_days, its `period` as
-- the day of a row): those stamped since this mart's column check last passed; a year of history is not
-- copied again for the month a night changes.
select {{ star_except(cost_lines_build_columns()) }}
from {{ ref('int_workload_cost_lines') }}
where {{ projection_scope(ref('int_workload_cost_lines'), cost_lines_build_columns(),
                          'column_constraints_fct_workload_cost_lines_') }}
