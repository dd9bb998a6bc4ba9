-- One row: x_history_key, a digest of what int_gpu_node_hours applies across all history. When it differs
-- from the key the model stored, every day of it is rebuilt (history_days); otherwise only the days whose
-- pool windows or node bill hours changed. Parts:
--   int_usage_history_key (registry files, GPU alias and MIG seeds, the scontrol inventory and its nodes'
--   pools and physical GPUs, the usage models' SQL);
--   the SQL and seeds int_gpu_node_hours is built from (upstream_code_digest: a changed rule or seed
--   upstream, staging included, can move any day's rows).
select md5(concat_ws('#', usage_key.x_history_key,
                     '{{ upstream_code_digest("model.gpu_ledger.int_gpu_node_hours") }}')) as x_history_key
from {{ ref('int_usage_history_key') }} as usage_key
