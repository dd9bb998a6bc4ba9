-- One row per watched series (dimension, value, currency): how many of its days were scored and
-- how many anomalies it has; status 'not enough history' when no day had min_history_days of history
-- (policy anomaly_detection), so a short series says so instead of guessing.
with scored as (
    select * from {{ ref('int_anomaly_daily_scored') }}
)

select
    concat(dimension, '|', dimension_value, '|', currency) as series_id,
    dimension,
    dimension_value,
    currency,
    min(day) as first_day,
    max(day) as last_day,
    count(*) as series_days,
    sum(case when has_history then 1 else 0 end) as scored_days,
    sum(case when is_anomaly then 1 else 0 end) as anomalies,
    case when sum(case when has_history then 1 else 0 end) = 0 then 'not enough history' else 'monitored' end as status
from scored
group by dimension, dimension_value, currency
