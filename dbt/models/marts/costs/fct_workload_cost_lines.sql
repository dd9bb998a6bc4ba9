-- The cost lines behind every unit cost, published so each number traces to its source rows.
select * from {{ ref('int_workload_cost_lines') }}
