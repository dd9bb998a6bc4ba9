-- Catches a GPU-hour priced twice (or lost), against the sources rather than the pivot of the same rows:
--  1. every GPU bill line tagged to a workload is priced exactly once: its cost lines (compute + idle)
--     add up to its EffectiveCost to the cent, no more (priced twice) and no less (dropped);
--  2. no training run, eval run or media batch is priced on top of a GPU bill line of the same workload
--     and GPU model running at the same time (the bill already prices those GPU-hours);
--  3. scheduler/telemetry usage on a GPU bill line's host in that hour is in the bill's pool (one fleet),
--     never in a capacity pool of its own where it would be billed again;
--  4. each unit-cost row's all-in cost equals the sum of its cost lines by key, and its GPU components
--     equal the GPU lines of the key (a component dropped or added twice by the pivot).
-- Rules 1 and 2 read the cost lines of the months built since this check last passed (macro
-- days_built_since_last_pass over int_workload_cost_lines' month stamps, widened to whole months) and the
-- bill lines of those months or of a file loaded since the pass: a bill line is priced in the month its
-- charge starts, and a new, restated or gone bill line or run rebuilds the cost lines of every month it
-- reaches (macros/cost_months.sql), so a month no build touched since the pass is the one that passed.
-- Every month on a full refresh or without a passing record. Rule 4 reads every row: the unit costs are
-- rebuilt whole, from more than the cost lines.
{{ config(meta={'dagster': {'ref': {'name': 'fct_workload_unit_cost'}}}) }}
{%- set scope = whole_months(days_built_since_last_pass(
        [(ref('int_workload_cost_lines'), 'period', 'x_built_at')],
        file_sources=[(ref('ledger_focus'), 'ChargePeriodStart', 'x_file_hash')])) %}

with ledger_gpu as (
    select x_charge_key, x_workload_id, x_gpu_model, ChargePeriodStart, ChargePeriodEnd, EffectiveCost
    from {{ ref('ledger_focus') }}
    where x_workload_id is not null and x_gpu_model is not null and ChargeCategory = 'Usage'
),

-- the cost lines are read where a rule reads them, with the columns it reads, not as one CTE of every
-- column that the engine would materialise whole (0.70 -> 0.30 CPU s at 256 GPUs x 365 days, with the scope)
bill_priced as (
    select ledger_gpu.x_charge_key, max(ledger_gpu.EffectiveCost) as effective_cost,
           coalesce(sum(lines.amount), 0) as priced
    from ledger_gpu
    -- a bill line's cost lines carry its key, its idle share the key + '#idle'; one equi-join on the key
    -- (an OR of the two was a range join, 14.7 s -> 1.1 s at 256 GPUs x 30 days)
    left join (
        select source_kind, source_ref, amount from {{ ref('fct_workload_cost_lines') }}
        where {{ in_plan('period', scope) }}
    ) as lines
        on lines.source_kind = 'bill_line'
        and regexp_replace(lines.source_ref, '#idle$', '') = ledger_gpu.x_charge_key
    where {{ in_plan('ledger_gpu.ChargePeriodStart', scope) }}
    group by ledger_gpu.x_charge_key
),

check_bill as (
    select 'bill line priced ' || cast(priced as string) || ' vs EffectiveCost ' || cast(effective_cost as string)
               as failure, x_charge_key as ref
    from bill_priced
    where abs(priced - effective_cost) >= 0.005
),

runs as (
    select 'training_run' as source_kind, run_id as ref, workload_id, gpu_model, started_at, ended_at
    from {{ ref('stg_benchmarks__training_runs') }}
    union all
    select 'eval_run', run_id, workload_id, gpu_model, started_at, ended_at from {{ ref('stg_benchmarks__eval_runs') }}
    union all
    select 'media_batch', batch_id, workload_id, gpu_model, started_at, ended_at
    from {{ ref('stg_benchmarks__media_batches') }}
),

-- the runs priced in production: a run's GPU work lines carry `<run>#<8 characters of the event id>`
-- (int_workload_cost_lines), so the run is the ref without its last '#' part; one equi-join instead of
-- a LIKE per (run, line) pair, which compared every run with every line of its kind (9.1M pairs at 256
-- GPUs x 30 days, growing with the square of the history)
priced_runs as (
    select distinct source_kind, regexp_replace(source_ref, '#[^#]*$', '') as ref
    from {{ ref('fct_workload_cost_lines') }}
    where basis = 'production' and source_kind in ('training_run', 'eval_run', 'media_batch')
      and instr(source_ref, '#') > 0 and {{ in_plan('period', scope) }}
),

check_runs as (
    select distinct runs.source_kind || ' priced over GPU bill line ' || ledger_gpu.x_charge_key as failure,
           runs.ref
    from runs
    inner join priced_runs on priced_runs.source_kind = runs.source_kind and priced_runs.ref = runs.ref
    inner join ledger_gpu
        on ledger_gpu.x_workload_id = runs.workload_id
        and ledger_gpu.x_gpu_model = runs.gpu_model
        and ledger_gpu.ChargePeriodStart < runs.ended_at
        and ledger_gpu.ChargePeriodEnd > runs.started_at
),

-- a bill line's host keys as rows (macro bill_host_keys), one equi-join on (hour, key), as in
-- int_gpu_usage_hourly; a host with a '/' of its own keeps the general match (host_is_bill_resource).
-- Usage of the days built since this check last passed (macro built_since_last_pass): the rule joins
-- rows of one hour, and a bill line that is new, restated or gone rebuilds the usage days it covers
-- (int_gpu_usage_hourly), so an hour whose usage no build touched since the pass is the one that passed.
usage as (
    select * from {{ ref('int_gpu_usage_hourly') }}
    where {{ built_since_last_pass() }}
),

bill_host_keys as (
    {{ bill_host_keys(ref('int_gpu_billing_hours_mapped'), ['hour_start', 'pool_id']) }}
),

check_fleet as (
    select distinct 'usage on bill host ' || usage.host || ' in pool ' || usage.pool_id
               || ', not the bill pool ' || bill.pool_id as failure, usage.gpu_key as ref
    from usage
    inner join bill_host_keys as bill
        on bill.hour_start = usage.hour_start
        and bill.host_key = lower(usage.host)
    where usage.pool_id <> bill.pool_id and instr(usage.host, '/') = 0
    union
    select distinct 'usage on bill host ' || usage.host || ' in pool ' || usage.pool_id
               || ', not the bill pool ' || bill.pool_id, usage.gpu_key
    from usage
    inner join {{ ref('int_gpu_billing_hours_mapped') }} as bill
        on bill.hour_start = usage.hour_start
        and {{ host_is_bill_resource('usage.host', 'bill.resource_id', 'bill.resource_name') }}
    where usage.pool_id <> bill.pool_id and instr(usage.host, '/') > 0
),

line_totals as (
    select basis, workload_id, period, currency, sum(amount) as amount,
           sum(case when component in ('gpu_compute', 'checkpointing', 'idle_capacity', 'failure_waste', 'queue_overhead')
                    then amount else 0 end) as gpu_amount
    from {{ ref('fct_workload_cost_lines') }}
    group by all
),

check_unit as (
    select 'unit cost all-in ' || cast(unit.all_in_cost as string) || ' vs lines '
               || cast(coalesce(line_totals.amount, 0) as string) as failure,
           unit.workload_id || ' ' || cast(unit.period as string) || ' ' || unit.currency || ' ' || unit.basis as ref
    from {{ ref('fct_workload_unit_cost') }} as unit
    left join line_totals
        on line_totals.basis = unit.basis and line_totals.workload_id = unit.workload_id
        and line_totals.period = unit.period and line_totals.currency = unit.currency
    where abs(unit.all_in_cost - coalesce(line_totals.amount, 0)) >= 0.005
       or abs(unit.gpu_compute + unit.checkpointing + unit.idle_capacity + unit.failure_waste + unit.queue_overhead
              - coalesce(line_totals.gpu_amount, 0)) >= 0.005
       or unit.all_in_cost <> unit.gpu_compute + unit.api_usage + unit.storage + unit.network + unit.checkpointing
              + unit.serving_stack + unit.observability + unit.platform_labor + unit.idle_capacity + unit.retry_waste
              + unit.failure_waste + unit.queue_overhead + unit.moderation_or_quality_filtering + unit.operator_review
)

select * from check_bill
union all select * from check_runs
union all select * from check_fleet
union all select * from check_unit
