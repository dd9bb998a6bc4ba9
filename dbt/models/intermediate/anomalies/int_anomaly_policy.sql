-- Anomaly-detection thresholds as one row (policy anomaly_detection, docs/registry.md); absent keys
-- take the documented defaults, so a registry without the policy still detects.
with policy as (
    select max(value) as value from {{ ref('stg_registry__policies') }} where policy = 'anomaly_detection'
)

select
    coalesce(cast({{ json_text('value', "'min_history_days'") }} as integer), 7) as min_history_days,
    coalesce(cast({{ json_text('value', "'window_days'") }} as integer), 28) as window_days,
    coalesce(cast({{ json_text('value', "'min_abs_impact'") }} as decimal(38, 12)), 10) as min_abs_impact,
    coalesce(cast({{ json_text('value', "'min_pct'") }} as double), 0.5) as min_pct,
    coalesce(cast({{ json_text('value', "'k'") }} as double), 4) as k,
    coalesce(cast({{ json_text('value', "'mad_floor_pct'") }} as double), 0.05) as mad_floor_pct,
    -- unit costs are cents or less per output: min_abs_impact (in currency) would hide every one of them
    coalesce(cast({{ json_text('value', "'min_unit_cost_impact'") }} as decimal(38, 12)), 0) as min_unit_cost_impact
from policy
