-- One row: x_history_key, a digest of what the FOCUS export applies across all history. When it
-- differs from the key int_focus_export_rows stored, every day of the export is rebuilt (history_days);
-- otherwise only the days whose lines or splits changed. int_focus_allocation_splits (upstream of the
-- export, so its SQL is in the digest) stores it too and rebuilds every billing period when it moves. Parts (macros/incremental_export_days.sql
-- registry_and_code_key): registry files (cost policies, teams, workloads, mappings: a line's team, the
-- chargeback basis), by content hash; the SQL and seeds the export is built from (a changed rule or
-- seed can move any day's rows).
{{ registry_and_code_key("model.gpu_ledger.int_focus_export_rows") }}
