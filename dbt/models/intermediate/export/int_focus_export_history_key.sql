-- One row: x_history_key, a digest of what the FOCUS export applies across all history. When it
-- differs from the key int_focus_export_rows stored, every day of the export is rebuilt (history_days);
-- otherwise only the days whose lines or splits changed. Parts:
--   registry files (cost policies, teams, workloads, mappings: a line's team, the chargeback basis),
--   by content hash;
--   the SQL and seeds the export is built from (upstream_code_digest: a changed rule or seed can move
--   any day's rows).
with registry_files as (
    select {{ sorted_distinct_join('file_hash', ',') }} as part
    from {{ ref('stg_audit__file_loads') }}
    where family = 'registry'
)

select md5(concat_ws('#', coalesce(registry_files.part, ''),
                     '{{ upstream_code_digest("model.gpu_ledger.int_focus_export_rows") }}')) as x_history_key
from registry_files
