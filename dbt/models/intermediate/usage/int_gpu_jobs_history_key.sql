-- One row: x_history_key, a digest of what int_gpu_jobs_attributed applies across all history: the
-- registry files (mappings, teams, workloads, cost policies: a job's owner and GPU fraction rule) by
-- content hash, the SQL and seeds upstream of it (GPU aliases, MIG profiles; macros/incremental_export_days.sql
-- registry_and_code_key) and the scontrol inventory (a job's GPU node and model). When it differs from
-- the stored one every day is rebuilt. (int_usage_history_key cannot serve: it reads int_gpu_nodes, which
-- is built from this model.)
with code_and_registry as (
    {{ registry_and_code_key("model.gpu_ledger.int_gpu_jobs_attributed") }}
),

inventory as (
    {{ inventory_digest() }}
)

select md5(concat_ws('#', code_and_registry.x_history_key, coalesce(inventory.part, ''))) as x_history_key
from code_and_registry
cross join inventory
