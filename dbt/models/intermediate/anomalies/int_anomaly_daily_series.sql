-- One daily cost series per dimension (team, workload, provider, service, gpu_model), value and
-- currency, dense from the series' first to its last day (a day without cost inside that span is 0,
-- so a stop shows as a drop; days after the last cost are not invented); plus one unit_cost series
-- per workload and currency (cost per accepted output, int_anomaly_unit_cost_daily), sparse: a day
-- without outputs has no unit cost, and 0 would be a false drop.
{%- set dimensions = ['team', 'workload', 'provider', 'service', 'gpu_model'] %}
with days as (
    select * from {{ ref('int_anomaly_cost_days') }}
),

sparse as (
    {%- for dim in dimensions %}
    select '{{ dim }}' as dimension, {{ dim }} as dimension_value, currency, day, sum(cost) as actual
    from days
    where {{ dim }} is not null
    group by {{ dim }}, currency, day
    {% if not loop.last %}union all{% endif %}
    {%- endfor %}
),

spans as (
    select dimension, dimension_value, currency, min(day) as first_day,
           cast(round({{ hours_between('cast(min(day) as timestamp)', 'cast(max(day) as timestamp)') }} / 24.0) as integer)
               as span_days
    from sparse
    group by dimension, dimension_value, currency
),

grid as (
    select spans.dimension, spans.dimension_value, spans.currency,
           spans.first_day + cast(d.day_offset as integer) as day
    from spans, {{ lateral_explode(int_series(0, 'spans.span_days')) }} as d(day_offset)
)

select
    grid.dimension,
    grid.dimension_value,
    grid.currency,
    grid.day,
    {{ money('coalesce(sparse.actual, 0)') }} as actual
from grid
left join sparse
    on sparse.dimension = grid.dimension and sparse.dimension_value = grid.dimension_value
    and sparse.currency = grid.currency and sparse.day = grid.day

union all

select 'unit_cost' as dimension, workload_id as dimension_value, currency, day, unit_cost as actual
from {{ ref('int_anomaly_unit_cost_daily') }}
