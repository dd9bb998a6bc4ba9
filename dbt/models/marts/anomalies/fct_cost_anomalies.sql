-- One row per cost anomaly: a day on which a daily EffectiveCost series (per team, workload,
-- provider, service or GPU model, and currency; int_anomaly_daily_scored) left its robust band:
-- trailing median of the previous window_days days +- k x 1.4826 x MAD, and passed the policy's
-- minimum absolute and percent impact. root_cause names the 1-3 values of one sub-dimension (sku,
-- resource or service) whose own deviation from their own trailing median explains most of the
-- anomaly: the sub-dimension whose largest value explains the largest share (ties: sku, then
-- resource, then service), values in the anomaly's direction, largest first.
-- A unit_cost anomaly (cost per accepted output of a workload) is explained by its two factors instead:
-- the day's cost and accepted outputs against their own medians over the same window, the factor
-- that moved more (in log terms, since unit cost = cost / outputs) first.
{%- set subdims = [('sku', 1), ('resource', 2), ('service', 3)] %}
with flagged as (
    select * from {{ ref('int_anomaly_daily_scored') }} where is_anomaly
),

policy as (
    select * from {{ ref('int_anomaly_policy') }}
),

days as (
    select * from {{ ref('int_anomaly_cost_days') }}
),

series as (
    select * from {{ ref('int_anomaly_daily_series') }}
),

-- the anomaly's own slice of the ledger, on the anomaly day and its baseline window
slice as (
    select flagged.dimension, flagged.dimension_value, flagged.currency, flagged.day as anomaly_day,
           days.day, days.sku, days.resource, days.service, days.cost
    from flagged
    cross join policy
    inner join days
        on days.currency = flagged.currency
        and days.day <= flagged.day and days.day >= flagged.day - cast(policy.window_days as integer)
        and case flagged.dimension
                when 'team' then days.team
                when 'workload' then days.workload
                when 'provider' then days.provider
                when 'service' then days.service
                when 'gpu_model' then days.gpu_model
            end = flagged.dimension_value
),

sub_daily as (
    {%- for sub, priority in subdims %}
    select dimension, dimension_value, currency, anomaly_day, '{{ sub }}' as sub_dimension, {{ priority }} as priority,
           {{ sub }} as sub_value, day, sum(cost) as cost
    from slice
    group by dimension, dimension_value, currency, anomaly_day, {{ sub }}, day
    {% if not loop.last %}union all{% endif %}
    {%- endfor %}
),

sub_values as (
    select distinct dimension, dimension_value, currency, anomaly_day, sub_dimension, priority, sub_value
    from sub_daily
    where sub_dimension <> dimension
),

-- each sub-value on each baseline day of the parent series (0 where it had no cost)
sub_grid as (
    select sub_values.*, series.day,
           coalesce(sub_daily.cost, 0) as cost
    from sub_values
    cross join policy
    inner join series
        on series.dimension = sub_values.dimension and series.dimension_value = sub_values.dimension_value
        and series.currency = sub_values.currency
        and series.day < sub_values.anomaly_day
        and series.day >= sub_values.anomaly_day - cast(policy.window_days as integer)
    left join sub_daily
        on sub_daily.dimension = sub_values.dimension and sub_daily.dimension_value = sub_values.dimension_value
        and sub_daily.currency = sub_values.currency and sub_daily.anomaly_day = sub_values.anomaly_day
        and sub_daily.sub_dimension = sub_values.sub_dimension and sub_daily.sub_value = sub_values.sub_value
        and sub_daily.day = series.day
),

sub_baseline as (
    select dimension, dimension_value, currency, anomaly_day, sub_dimension, sub_value,
           percentile_cont(0.5) within group (order by cost) as baseline
    from sub_grid
    group by dimension, dimension_value, currency, anomaly_day, sub_dimension, sub_value
),

sub_deviation as (
    select
        sub_values.dimension, sub_values.dimension_value, sub_values.currency, sub_values.anomaly_day,
        sub_values.sub_dimension, sub_values.priority, sub_values.sub_value,
        {{ money('coalesce(today.cost, 0) - coalesce(sub_baseline.baseline, 0)') }} as deviation,
        flagged.impact_abs
    from sub_values
    inner join flagged
        on flagged.dimension = sub_values.dimension and flagged.dimension_value = sub_values.dimension_value
        and flagged.currency = sub_values.currency and flagged.day = sub_values.anomaly_day
    left join sub_baseline
        on sub_baseline.dimension = sub_values.dimension and sub_baseline.dimension_value = sub_values.dimension_value
        and sub_baseline.currency = sub_values.currency and sub_baseline.anomaly_day = sub_values.anomaly_day
        and sub_baseline.sub_dimension = sub_values.sub_dimension and sub_baseline.sub_value = sub_values.sub_value
    left join sub_daily as today
        on today.dimension = sub_values.dimension and today.dimension_value = sub_values.dimension_value
        and today.currency = sub_values.currency and today.anomaly_day = sub_values.anomaly_day
        and today.sub_dimension = sub_values.sub_dimension and today.sub_value = sub_values.sub_value
        and today.day = sub_values.anomaly_day
),

-- contributions in the anomaly's direction, as a share of its impact
contributions as (
    select *,
           cast(deviation as double) / abs(cast(impact_abs as double)) * case when impact_abs < 0 then -1 else 1 end
               as share
    from sub_deviation
    where (impact_abs > 0 and deviation > 0) or (impact_abs < 0 and deviation < 0)
),

ranked as (
    select *,
           row_number() over (partition by dimension, dimension_value, currency, anomaly_day, sub_dimension
                              order by share desc, sub_value) as value_rank,
           max(share) over (partition by dimension, dimension_value, currency, anomaly_day, sub_dimension) as top_share
    from contributions
),

chosen_dimension as (
    select dimension, dimension_value, currency, anomaly_day, sub_dimension,
           row_number() over (partition by dimension, dimension_value, currency, anomaly_day
                              order by top_share desc, priority) as dimension_rank
    from ranked
    where value_rank = 1
),

causes as (
    select
        ranked.dimension, ranked.dimension_value, ranked.currency, ranked.anomaly_day,
        max(ranked.sub_dimension) as root_cause_dimension,
        sum(least(ranked.share, 1.0)) as root_cause_share,
        concat_ws('; '
            {%- for rank in [1, 2, 3] %},
            max(case when ranked.value_rank = {{ rank }} then
                concat(ranked.sub_dimension, ' ', ranked.sub_value, ' ',
                       case when ranked.deviation > 0 then '+' else '' end,
                       cast(cast(round(ranked.deviation, 2) as decimal(38, 2)) as string),
                       ' (', cast(cast(round(100 * ranked.share, 0) as integer) as string), '%)')
            end)
            {%- endfor %}
        ) as root_cause
    from ranked
    inner join chosen_dimension
        on chosen_dimension.dimension = ranked.dimension and chosen_dimension.dimension_value = ranked.dimension_value
        and chosen_dimension.currency = ranked.currency and chosen_dimension.anomaly_day = ranked.anomaly_day
        and chosen_dimension.sub_dimension = ranked.sub_dimension and chosen_dimension.dimension_rank = 1
    where ranked.value_rank <= 3
    group by ranked.dimension, ranked.dimension_value, ranked.currency, ranked.anomaly_day
),

unit_days as (
    select * from {{ ref('int_anomaly_unit_cost_daily') }}
),

unit_window as (
    select flagged.dimension_value, flagged.currency, flagged.day as anomaly_day,
           percentile_cont(0.5) within group (order by cast(unit_days.cost as double)) as cost_median,
           percentile_cont(0.5) within group (order by cast(unit_days.accepted_outputs as double)) as outputs_median
    from flagged
    cross join policy
    inner join unit_days
        on unit_days.workload_id = flagged.dimension_value and unit_days.currency = flagged.currency
        and unit_days.day < flagged.day and unit_days.day >= flagged.day - cast(policy.window_days as integer)
    where flagged.dimension = 'unit_cost'
    group by flagged.dimension_value, flagged.currency, flagged.day
),

unit_moves as (
    select
        unit_window.*,
        today.cost,
        today.accepted_outputs,
        cast(today.cost as double) / unit_window.cost_median - 1 as cost_change,
        cast(today.accepted_outputs as double) / unit_window.outputs_median - 1 as outputs_change,
        abs(ln(cast(today.cost as double) / unit_window.cost_median)) as cost_move,
        abs(ln(cast(today.accepted_outputs as double) / unit_window.outputs_median)) as outputs_move
    from unit_window
    inner join unit_days as today
        on today.workload_id = unit_window.dimension_value and today.currency = unit_window.currency
        and today.day = unit_window.anomaly_day
),

unit_texts as (
    select
        unit_moves.*,
        concat('accepted_outputs ', cast(accepted_outputs as string), ' vs ',
               cast(cast(round(outputs_median, 0) as bigint) as string), ' (',
               case when outputs_change >= 0 then '+' else '' end,
               cast(cast(round(100 * outputs_change, 0) as integer) as string), '%)') as outputs_text,
        concat('cost ', cast(cast(round(cost, 2) as decimal(38, 2)) as string), ' vs ',
               cast(cast(round(cost_median, 2) as decimal(38, 2)) as string), ' (',
               case when cost_change >= 0 then '+' else '' end,
               cast(cast(round(100 * cost_change, 0) as integer) as string), '%)') as cost_text
    from unit_moves
),

unit_causes as (
    select
        'unit_cost' as dimension, dimension_value, currency, anomaly_day,
        case when outputs_move >= cost_move then 'accepted_outputs' else 'cost' end as root_cause_dimension,
        -- the chosen factor's part of |ln(unit cost ratio)| when both move the same way, else 1
        least(greatest(outputs_move, cost_move) / nullif(outputs_move + cost_move, 0), 1.0) as root_cause_share,
        case when outputs_move >= cost_move then concat(outputs_text, '; ', cost_text)
             else concat(cost_text, '; ', outputs_text) end as root_cause
    from unit_texts
)

select
    concat(flagged.dimension, '|', flagged.dimension_value, '|', flagged.currency, '|', cast(flagged.day as string))
        as anomaly_id,
    flagged.day,
    flagged.dimension,
    flagged.dimension_value,
    flagged.currency,
    flagged.actual,
    flagged.expected,
    flagged.expected_low,
    flagged.expected_high,
    {{ money('flagged.scaled_mad') }} as scaled_mad,
    flagged.score,
    flagged.impact_abs,
    flagged.impact_pct,
    case when flagged.impact_abs > 0 then 'spike' else 'drop' end as direction,
    flagged.history_days,
    coalesce(causes.root_cause, unit_causes.root_cause, '(no single sub-dimension value)') as root_cause,
    coalesce(causes.root_cause_dimension, unit_causes.root_cause_dimension) as root_cause_dimension,
    coalesce(causes.root_cause_share, unit_causes.root_cause_share) as root_cause_share
from flagged
left join causes
    on causes.dimension = flagged.dimension and causes.dimension_value = flagged.dimension_value
    and causes.currency = flagged.currency and causes.anomaly_day = flagged.day
left join unit_causes
    on unit_causes.dimension = flagged.dimension and unit_causes.dimension_value = flagged.dimension_value
    and unit_causes.currency = flagged.currency and unit_causes.anomaly_day = flagged.day
