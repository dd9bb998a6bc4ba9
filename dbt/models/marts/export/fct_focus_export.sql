-- The published ledger as a FOCUS 1.3 dataset (`gpu-ledger export focus` writes it to files): the rows
-- of int_focus_export_rows (one per part of a ledger line; the split and its arithmetic are described
-- there), which a nightly refresh rebuilds by day, without the columns kept for that build.
select {{ star_except(['x_charge_day', 'x_split_method', 'x_split_workload_id', 'x_split_weight',
                       'x_split_weight_total', 'x_split_share', 'x_split_share_rank', 'x_split_idle_share',
                       'x_split_portion_fraction', 'x_loaded_at', 'x_history_key']) }}
from {{ ref('int_focus_export_rows') }}
