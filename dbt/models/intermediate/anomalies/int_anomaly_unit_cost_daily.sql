-- Daily unit cost per workload and currency: the workload's ledger EffectiveCost on the day
-- (int_anomaly_cost_days: bill lines tagged to it, multi-day lines spread evenly) / its accepted
-- outputs of the day (production records, counted as int_workload_outputs counts them per month:
-- quality-filter export, training runs that completed and reached target, eval suites with every task
-- completed, media batches for months the quality export does not cover; run records by start day).
-- Only days with both cost and accepted outputs have a unit cost (a day without outputs has none, and a
-- day without cost is more likely a bill not yet delivered than free work), so the series is sparse.
-- Run-priced work and monthly estimates are not in it: they have no day (fct_workload_unit_cost has them per month).
with quality as (
    select workload_id, cast(day as date) as day, sum(accepted) as accepted
    from {{ ref('stg_benchmarks__quality_outcomes') }}
    group by workload_id, cast(day as date)
),

runs as (
    select workload_id, cast(started_at as date) as day,
           sum(case when outcome = 'completed' and coalesce(reached_target, false) then 1 else 0 end) as accepted
    from {{ ref('stg_benchmarks__training_runs') }}
    group by workload_id, cast(started_at as date)
    union all
    select workload_id, cast(started_at as date) as day,
           sum(case when tasks_completed = tasks_total then 1 else 0 end) as accepted
    from {{ ref('stg_benchmarks__eval_runs') }}
    group by workload_id, cast(started_at as date)
    union all
    -- Media batches count only for months the quality-filter export does not cover (as int_workload_outputs).
    select media.workload_id, cast(media.started_at as date) as day, sum(media.accepted) as accepted
    from {{ ref('stg_benchmarks__media_batches') }} as media
    where not exists (
        select 1 from quality
        where quality.workload_id = media.workload_id
          and date_trunc('month', quality.day) = date_trunc('month', cast(media.started_at as date))
    )
    group by media.workload_id, cast(media.started_at as date)
),

outputs as (
    select workload_id, day, sum(accepted) as accepted_outputs
    from (select * from quality union all select * from runs) as unioned
    where workload_id is not null
    group by workload_id, day
),

costs as (
    select workload, currency, day, sum(cost) as cost
    from {{ ref('int_anomaly_cost_days') }}
    where workload <> '(none)'
    group by workload, currency, day
)

select
    costs.workload as workload_id,
    costs.currency,
    costs.day,
    {{ money('costs.cost') }} as cost,
    cast(outputs.accepted_outputs as bigint) as accepted_outputs,
    {{ safe_unit_cost('costs.cost', 'outputs.accepted_outputs') }} as unit_cost
from costs
inner join outputs on outputs.workload_id = costs.workload and outputs.day = costs.day
where outputs.accepted_outputs > 0 and costs.cost > 0
