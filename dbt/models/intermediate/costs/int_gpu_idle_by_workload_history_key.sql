-- One row: x_history_key, a digest of what int_gpu_idle_by_workload applies across all history. When it
-- differs from the key the model stored, every day of it is rebuilt (history_days); otherwise only the
-- start days whose lines' input stamps changed (macros/day_stamps.sql). Parts (registry_and_code_key):
-- registry files (the idle_capacity_basis policy, workload mappings), the SQL and seeds upstream.
{{ registry_and_code_key("model.gpu_ledger.int_gpu_idle_by_workload") }}
