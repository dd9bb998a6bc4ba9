-- One row: x_history_key, a digest of what int_gpu_telemetry_hourly applies across all history: its SQL,
-- the staging SQL upstream of it and the project macros they call (upstream_code_digest). When it differs
-- from the key the model stored, every day of it is rebuilt (history_days), so an upgrade that changes how
-- samples fold to the hour reaches the stored days without a --full-refresh; otherwise only the days of
-- files loaded since the last build. Only the code: the fold does no registry, seed or inventory lookup
-- (names, pools and owners are resolved downstream, in int_gpu_usage_hourly, whose own key covers them),
-- so a registry or alias change cannot move a row of it, and a key over them would rebuild every day of
-- the biggest raw table's samples for nothing.
select cast('{{ upstream_code_digest("model.gpu_ledger.int_gpu_telemetry_hourly") }}' as string) as x_history_key
