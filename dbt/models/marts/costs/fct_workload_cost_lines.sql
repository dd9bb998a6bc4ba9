-- The cost lines behind every unit cost, published so each number traces to its source rows (without the
-- columns int_workload_cost_lines keeps for its month-incremental build).
select {{ star_except(['x_inputs_digest', 'x_built_at', 'x_loaded_at', 'x_history_key']) }}
from {{ ref('int_workload_cost_lines') }}
