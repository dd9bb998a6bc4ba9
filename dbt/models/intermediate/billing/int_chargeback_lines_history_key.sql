-- One row: x_history_key, a digest of what int_chargeback_lines applies across all history. When it
-- differs from the key the model stored, every billing period is rebuilt (history_days); otherwise only
-- the periods whose input stamps changed (macros/incremental_months.sql). Parts (macros/incremental_export_days.sql
-- registry_and_code_key): registry files (cost policies, teams, mappings), by content hash; the SQL and
-- seeds the chargeback is built from.
{{ registry_and_code_key("model.gpu_ledger.int_chargeback_lines") }}
