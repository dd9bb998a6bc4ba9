-- One row: x_history_key, a digest of what int_workload_cost_lines applies across all history. When it
-- differs from the key the model stored, every month of it is rebuilt (history_days); otherwise only the
-- months whose input stamps changed (macros/incremental_months.sql). Parts (macros/incremental_export_days.sql
-- registry_and_code_key): registry files (cost policies, workloads and their assumptions, teams, mappings,
-- sites), by content hash; the SQL and seeds the cost lines are built from.
{{ registry_and_code_key("model.gpu_ledger.int_workload_cost_lines") }}
