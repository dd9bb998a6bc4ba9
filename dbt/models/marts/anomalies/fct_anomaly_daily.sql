-- Every watched series-day with its baseline band (int_anomaly_daily_scored), published so the
-- dashboard and reports can draw each anomaly against its series and expected band.
select
    concat(dimension, '|', dimension_value, '|', currency) as series_id,
    dimension,
    dimension_value,
    currency,
    day,
    actual,
    expected,
    expected_low,
    expected_high,
    score,
    history_days,
    has_history,
    is_anomaly
from {{ ref('int_anomaly_daily_scored') }}
