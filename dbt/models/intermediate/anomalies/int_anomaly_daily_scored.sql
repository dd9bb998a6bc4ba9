-- Every series-day against its robust baseline: expected = median of the series' previous
-- window_days days (policy anomaly_detection), MAD = median absolute deviation from that median,
-- scaled by 1.4826 (the standard deviation of a normal series) and floored at mad_floor_pct of the
-- expected value (a perfectly steady series has MAD 0). history_days = days of the window with cost
-- (zero-filled days do not count: a lone old line followed by weeks of nothing is no history).
-- unit_cost series (cost per accepted output) use min_unit_cost_impact instead of min_abs_impact
-- and no one-cent floor on the scaled MAD.
-- is_anomaly when the series has at least min_history_days days of history and the deviation passes all three thresholds: |score| >= k,
-- |impact| >= min_abs_impact and |impact| / expected >= min_pct (always passed when expected is 0).
with series as (
    select * from {{ ref('int_anomaly_daily_series') }}
),

policy as (
    select * from {{ ref('int_anomaly_policy') }}
),

history as (
    select s.dimension, s.dimension_value, s.currency, s.day, h.actual as past
    from series as s
    cross join policy
    inner join series as h
        on h.dimension = s.dimension and h.dimension_value = s.dimension_value and h.currency = s.currency
        and h.day < s.day and h.day >= s.day - cast(policy.window_days as integer)
),

medians as (
    select dimension, dimension_value, currency, day, sum(case when past <> 0 then 1 else 0 end) as history_days,
           percentile_cont(0.5) within group (order by past) as expected
    from history
    group by dimension, dimension_value, currency, day
),

mads as (
    select history.dimension, history.dimension_value, history.currency, history.day,
           percentile_cont(0.5) within group (order by abs(cast(history.past as double) - medians.expected)) as mad
    from history
    inner join medians
        on medians.dimension = history.dimension and medians.dimension_value = history.dimension_value
        and medians.currency = history.currency and medians.day = history.day
    group by history.dimension, history.dimension_value, history.currency, history.day
),

scored as (
    select
        series.dimension,
        series.dimension_value,
        series.currency,
        series.day,
        series.actual,
        coalesce(medians.history_days, 0) as history_days,
        {{ money('medians.expected') }} as expected,
        mads.mad,
        -- The absolute floor is a cent for money; a unit cost (often a fraction of a cent) keeps only the relative floor.
        greatest(1.4826 * mads.mad, policy.mad_floor_pct * abs(medians.expected),
                 case when series.dimension = 'unit_cost' then 0.000001 else 0.01 end) as scaled_mad,
        policy.min_history_days,
        case when series.dimension = 'unit_cost' then policy.min_unit_cost_impact else policy.min_abs_impact end
            as min_abs_impact,
        policy.min_pct, policy.k
    from series
    cross join policy
    left join medians
        on medians.dimension = series.dimension and medians.dimension_value = series.dimension_value
        and medians.currency = series.currency and medians.day = series.day
    left join mads
        on mads.dimension = series.dimension and mads.dimension_value = series.dimension_value
        and mads.currency = series.currency and mads.day = series.day
)

select
    dimension,
    dimension_value,
    currency,
    day,
    actual,
    history_days,
    history_days >= min_history_days as has_history,
    expected,
    mad,
    scaled_mad,
    {{ money('expected - k * scaled_mad') }} as expected_low,
    {{ money('expected + k * scaled_mad') }} as expected_high,
    case when expected is not null then (cast(actual as double) - cast(expected as double)) / scaled_mad end as score,
    {{ money('actual - expected') }} as impact_abs,
    case when expected <> 0 then cast(actual - expected as double) / abs(cast(expected as double)) end as impact_pct,
    coalesce(
        history_days >= min_history_days
        and abs(cast(actual as double) - cast(expected as double)) >= k * scaled_mad
        and abs(actual - expected) >= min_abs_impact
        and (expected = 0 or abs(cast(actual - expected as double)) / abs(cast(expected as double)) >= min_pct),
        false) as is_anomaly
from scored
