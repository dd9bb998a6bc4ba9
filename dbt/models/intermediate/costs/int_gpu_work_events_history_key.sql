-- One row: x_history_key, a digest of what int_gpu_work_events applies across all history: the registry
-- files (cost policies: a media batch's provider) by content hash and the SQL and seeds upstream of it
-- (macros/incremental_export_days.sql registry_and_code_key). When it differs from the stored one every
-- day is rebuilt.
{{ registry_and_code_key("model.gpu_ledger.int_gpu_work_events") }}
