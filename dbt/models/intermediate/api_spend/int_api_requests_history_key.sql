-- One row: x_history_key, a digest of what int_api_requests_allocated applies across all history: the
-- registry files (teams, aliases, api_team mappings, workloads: a request's team and workload) by content
-- hash and the SQL and seeds upstream of the model (macros/incremental_export_days.sql
-- registry_and_code_key). When it differs from the stored key every day is rebuilt.
{{ registry_and_code_key("model.gpu_ledger.int_api_requests_allocated") }}
