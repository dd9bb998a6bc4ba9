{{ config(
    materialized='incremental',
    incremental_strategy=gpu_ledger.day_incremental_strategy(),
    partition_by=gpu_ledger.day_partition_by('period'),
    unique_key='period',
    on_schema_change='append_new_columns',
    pre_hook=[
        {"sql": "{{ gpu_ledger.clear_when_history_changed(ref('int_workload_cost_lines_history_key'), [('x_inputs_digest', 'string'), ('x_built_at', 'timestamp')]) }}", "transaction": false},
        {"sql": "{{ gpu_ledger.clear_months('period', gpu_ledger.cost_lines_changed_months(), ref('int_workload_cost_lines_history_key'), ['benchmarks', 'prices']) }}", "transaction": false}
    ],
    post_hook="{{ gpu_ledger.store_day_digests(gpu_ledger.cost_lines_stamps('day')) }}"
) }}
-- Every cost a workload carries, one line per (source row, component), traceable to where it came
-- from: priced GPU work, LLM API requests, bill lines tagged to the workload, the registry's
-- monthly assumptions (storage, network, serving stack), media review and moderation, and the
-- shared lines spread over the month's workloads (observability, platform labour: the monthly amount
-- prorated to the days any workload was active, like the estimates).
-- cause names why a waste line is waste (failed_run, failed_task, failed_render, failed_request, failed_job,
-- oom, timeout, preempted, node_fail, unallocated, underused, queue); null on lines that are not waste.
-- Registry assumptions are estimates that fill gaps only: prorated to the days the workload was active in
-- the month and only for a component with no bill line for that workload-month (detail 'estimate: ...').
-- Incremental by calendar month of period (macros/incremental_months.sql, macros/cost_months.sql): every
-- rule above reads the rows of one workload-month, and a run or bill line of the month with the inputs
-- of the months it runs in. A run rebuilds the months whose input stamps changed (days the usage models
-- rebuilt, ledger and API files with their rows per month), the months of runs and bill lines that reach
-- into a changed day of such a month (the day digests of the last build: int_workload_cost_lines__day_digests),
-- and the backfill window; every month when int_workload_cost_lines_history_key
-- changed (registry files, the SQL and seeds upstream) or a benchmarks or prices file was loaded (run
-- records and prices the stamps do not place: a restated run may move, a price applies to any later day).
{%- if is_incremental() %}
    {%- set plan = month_plan(cost_lines_changed_months(), ref('int_workload_cost_lines_history_key'), ['benchmarks', 'prices']) %}
{%- else %}
    {%- set plan = {'all': true, 'days': []} %}
{%- endif %}
{{ months_rebuilt_comment(plan) }}
with policies as (
    select * from {{ ref('int_cost_policies') }}
),

workloads as (
    select * from {{ ref('stg_registry__workloads') }}
),

plan_runs as (
    -- The run records (training and eval runs, media batches) that overlap the months this run builds
    -- (every one in a full build), read once: each staging view dedups the whole history of its runs,
    -- so every further read of them was another pass over a year of runs.
    select runs.*
    from (
        select 'training_run' as source_kind, run_id as ref, workload_id, gpu_model, started_at, ended_at
        from {{ ref('stg_benchmarks__training_runs') }}
        union all
        select 'eval_run', run_id, workload_id, gpu_model, started_at, ended_at
        from {{ ref('stg_benchmarks__eval_runs') }}
        union all
        select 'media_batch', batch_id, workload_id, gpu_model, started_at, ended_at
        from {{ ref('stg_benchmarks__media_batches') }}
    ) as runs
    where runs.workload_id is not null and runs.started_at is not null and runs.ended_at is not null
      and {{ overlaps_plan('runs.started_at', 'greatest(runs.ended_at, runs.started_at + interval 1 microsecond)', plan) }}
),

runs_on_bill as (
    -- A run record whose GPUs sit on a GPU bill line of the same workload and GPU model while it runs is
    -- priced by that bill line already: list-pricing the run too would count its GPU-hours twice
    -- (assert_gpu_hours_priced_once). Its outputs still count; its cost is the bill line's.
    -- Runs and lines meet on a UTC day both touch as well: on workload and GPU model alone every run of
    -- a workload met every bill line of its history (runs x lines, growing with the square of history).
    -- Two overlapping intervals share the day of the later start; a zero-length run or line counts on
    -- its start day (greatest(..., start + 1 microsecond)), so no pair the overlap test keeps is lost.
    select run_days.source_kind, run_days.ref
    from (
        select distinct source_kind, ref, workload_id, gpu_model, started_at, ended_at, cast(hour_start as date) as day
        from (
            -- a run without a GPU model meets no line (the join on it); no filter on it here, so the
            -- staging view's model mapping (a chain of regular expressions) runs on this plan's runs only
            select runs.*,
                   {{ hour_buckets('runs.started_at', "greatest(runs.ended_at, runs.started_at + interval 1 microsecond)") }}
                       as hour_start
            from plan_runs as runs
        ) as run_hours
    ) as run_days
    inner join (
        select distinct x_workload_id, x_gpu_model, ChargePeriodStart, ChargePeriodEnd, cast(hour_start as date) as day
        from (
            select ledger.x_workload_id, ledger.x_gpu_model, ledger.ChargePeriodStart, ledger.ChargePeriodEnd,
                   {{ hour_buckets('ledger.ChargePeriodStart',
                                   "greatest(ledger.ChargePeriodEnd, ledger.ChargePeriodStart + interval 1 microsecond)") }}
                       as hour_start
            from {{ ref('ledger_focus') }} as ledger
            where ledger.ChargeCategory = 'Usage' and ledger.x_workload_id is not null and ledger.x_gpu_model is not null
              and ledger.ChargePeriodStart is not null and ledger.ChargePeriodEnd is not null
              -- only lines the runs of the rebuilt months can meet (every line in a full build)
              and ledger.ChargePeriodStart <= (select max(ended_at) from plan_runs)
              and ledger.ChargePeriodEnd >= (select min(started_at) from plan_runs)
        ) as line_hours
    ) as line_days
        on line_days.x_workload_id = run_days.workload_id and line_days.x_gpu_model = run_days.gpu_model
        and line_days.day = run_days.day
        and line_days.ChargePeriodStart < run_days.ended_at and line_days.ChargePeriodEnd > run_days.started_at
    group by run_days.source_kind, run_days.ref
),

gpu_work as (
    -- Priced GPU work (run records; scheduler/telemetry GPU-hours on no bill line), labelled with how
    -- it was priced ('list-priced: ...', 'owned-hardware: ...'). Unpriced work has no amount and no
    -- workload line: fct_unpriced_usage lists it with its reason; work with no workload is a team-level
    -- showback line (fct_showback_monthly).
    select basis, workload_id, date_trunc('month', event_at)::date as period, currency, component, amount,
           -- One source row can give two lines of one component (a failed run's compute and checkpoints).
           source_kind, source_ref || '#' || left(event_id, 8) as source_ref,
           pricing_status || ': ' || coalesce(nullif(rate_basis, ''), 'observed price') as detail,
           case
               when component not in ('failure_waste', 'retry_waste', 'queue_overhead') then cast(null as string)
               when component = 'queue_overhead' then 'queue'
               when source_kind = 'training_run' then 'failed_run'
               when source_kind = 'eval_run' then 'failed_task'
               when source_kind = 'media_batch' then 'failed_render'
               when source_kind = 'benchmark_run' then 'failed_request'
               else 'failed_job'
           end as cause
    from {{ ref('int_gpu_work_priced') }} as work
    where pricing_status <> 'unpriced' and workload_id is not null and {{ in_plan('event_at', plan) }}
      and not exists (select 1 from runs_on_bill
                      where runs_on_bill.source_kind = work.source_kind and runs_on_bill.ref = work.source_ref)
),

api as (
    select 'production' as basis, workload_tag as workload_id, date_trunc('month', started_at)::date as period,
           currency,
           -- A failed request the provider billed is retry waste, not free.
           case when status = 'failure' then 'retry_waste' else 'api_usage' end as component,
           spend as amount, 'api_request' as source_kind, request_id as source_ref,
           provider || '/' || model as detail,
           case when status = 'failure' then 'failed_request' end as cause
    from {{ ref('int_api_requests_allocated') }}
    where workload_tag is not null and spend <> 0 and {{ in_plan('started_at', plan) }}
),

idle as (
    select * from {{ ref('int_gpu_idle_by_workload') }}
),

billed_lines as (
    -- idle shares are one row per workload and day: the join keys alone make it a hash join (with the
    -- line's own conditions in the ON clause the engine compared every line with every idle row)
    select ledger.*,
           case when ledger.x_gpu_model is not null and ledger.ChargeCategory = 'Usage'
                then coalesce(idle.idle_share, 0) else 0 end as idle_share
    from {{ ref('ledger_focus') }} as ledger
    left join idle
        on idle.workload_id = ledger.x_workload_id and idle.day = cast(ledger.ChargePeriodStart as date)
    where ledger.x_workload_id is not null and {{ in_plan('ledger.ChargePeriodStart', plan) }}
),

billed as (
    -- GPU bill lines split into the used share (gpu_compute) and the idle share (idle_capacity).
    select 'production' as basis, x_workload_id as workload_id, date_trunc('month', ChargePeriodStart)::date as period,
           BillingCurrency as currency,
           case
               when ServiceCategory = 'Storage' then 'storage'
               when ServiceCategory = 'Networking' then 'network'
               when x_gpu_model is not null then 'gpu_compute'
               else 'serving_stack'
           end as component,
           case when x_gpu_model is not null
                then {{ money('EffectiveCost - ' ~ money('EffectiveCost * cast(idle_share as decimal(18, 12))')) }}
                else EffectiveCost end as amount,
           'bill_line' as source_kind, x_charge_key as source_ref,
           coalesce(ServiceName, ChargeDescription) as detail,
           cast(null as string) as cause
    from billed_lines
    union all
    select 'production', x_workload_id, date_trunc('month', ChargePeriodStart)::date, BillingCurrency,
           'idle_capacity', {{ money('EffectiveCost * cast(idle_share as decimal(18, 12))') }},
           'bill_line', x_charge_key || '#idle',
           case policies.idle_capacity_basis
               when 'unallocated_and_underused' then 'billed GPU-hours unallocated or underused (usage telemetry, hour by hour)'
               else 'billed GPU-hours no job, pod or serving process held (usage telemetry, hour by hour)' end,
           case policies.idle_capacity_basis when 'unallocated_and_underused' then 'unallocated_or_underused'
                else 'unallocated' end
    from billed_lines, policies
    where x_gpu_model is not null and idle_share > 0
),

media_people as (
    -- Policy amounts keep the policy's currency.
    select 'production' as basis, workload_id, date_trunc('month', started_at)::date as period,
           policies.operator_hourly_rate_currency as currency,
           'operator_review' as component,
           {{ money('cast(operator_review_minutes / 60.0 as decimal(38, 6)) * policies.operator_hourly_rate') }} as amount,
           'media_batch' as source_kind, batch_id as source_ref, 'operator minutes x operator_hourly_rate' as detail,
           cast(null as string) as cause
    from {{ ref('stg_benchmarks__media_batches') }}, policies
    where coalesce(operator_review_minutes, 0) > 0 and {{ in_plan('started_at', plan) }}
    union all
    select 'production', workload_id, date_trunc('month', started_at)::date, policies.moderation_cost_currency,
           'moderation_or_quality_filtering',
           {{ money('cast(produced as decimal(38, 6)) * policies.moderation_cost_per_asset') }},
           'media_batch', batch_id, 'produced assets x moderation_cost_per_asset', cast(null as string)
    from {{ ref('stg_benchmarks__media_batches') }}, policies
    where coalesce(produced, 0) > 0 and {{ in_plan('started_at', plan) }}
),

owned_idle as (
    -- The workload's share of its owned site's capacity nobody held (int_owned_idle_by_workload).
    select 'production' as basis, workload_id, period, currency, 'idle_capacity' as component, amount,
           'owned_idle' as source_kind, site || '|' || pool_id || '|' || gpu_model as source_ref,
           'owned-hardware: idle capacity of site ' || site || ' (' || gpu_model || '), share '
               || cast(share as string) || ' of the GPU-hours allocated there this month' as detail,
           cast(null as string) as cause
    from {{ ref('int_owned_idle_by_workload') }}
    where {{ in_plan('period', plan) }}
),

direct as (
    select * from gpu_work
    union all select * from api
    union all select * from billed
    union all select * from media_people
    union all select * from owned_idle
),

-- Days the workload was active: any day its priced GPU work, API requests, bill lines (every day of a
-- multi-day line) or run records (every day from start to end) touch.
activity as (
    select workload_id, cast(event_at as date) as day
    from {{ ref('int_gpu_work_priced') }}
    where basis = 'production' and workload_id is not null and {{ in_plan('event_at', plan) }}
    union all
    select workload_tag, cast(started_at as date) from {{ ref('int_api_requests_allocated') }}
    where workload_tag is not null and {{ in_plan('started_at', plan) }}
    union all
    select x_workload_id, cast(ChargePeriodStart as date) from {{ ref('ledger_focus') }}
    where x_workload_id is not null and {{ in_plan('ChargePeriodStart', plan) }}
    union all
    select workload_id, cast(hour_start as date) from {{ ref('int_gpu_billing_hours_mapped') }}
    where workload_id is not null and {{ in_plan('hour_start', plan) }}
    union all
    select workload_id, cast(hour_start as date)
    from (
        -- plan_runs overlap the plan by [started_at, ended_at) here, as ended_at > started_at
        select workload_id, {{ hour_buckets('started_at', 'ended_at') }} as hour_start
        from plan_runs as runs
        where ended_at > started_at
    ) as run_hours
    where {{ in_plan('hour_start', plan) }}
),

active_months as (
    select workload_id, date_trunc('month', day)::date as period, count(distinct day) as active_days
    from activity
    where workload_id is not null
    group by all
),

billed_components as (
    -- A component with a bill line for the workload-month needs no estimate.
    select distinct workload_id, period, component from billed
),

assumption_items as (
    select workloads.workload_id, keys.key,
           cast({{ json_text('workloads.assumptions', 'keys.key') }} as decimal(38, 12)) as amount,
           case keys.key when 'storage_monthly' then 'storage' when 'network_monthly' then 'network'
                         else 'serving_stack' end as component
    from workloads
    cross join (values ('storage_monthly'), ('network_monthly'), ('serving_stack_monthly'), ('gateway_monthly'))
        as keys(key)
),

assumed as (
    -- Monthly amounts the team states in the registry (USD): estimates that fill gaps only, prorated to
    -- the days the workload was active (monthly x active days / days in the month), and only for a
    -- component no bill line of the workload-month covers.
    select 'production' as basis, active_months.workload_id, active_months.period, 'USD' as currency,
           items.component,
           {{ money('items.amount * cast(active_months.active_days as decimal(10, 0))
                     / cast(day(last_day(active_months.period)) as decimal(10, 0))') }} as amount,
           'registry_assumption' as source_kind,
           active_months.workload_id || ':' || cast(active_months.period as string) || ':' || items.key as source_ref,
           'estimate: workloads.yaml assumptions.' || items.key || ' x ' || cast(active_months.active_days as string)
               || '/' || cast(day(last_day(active_months.period)) as string) || ' active days' as detail,
           cast(null as string) as cause
    from active_months
    inner join assumption_items as items on items.workload_id = active_months.workload_id
    where items.amount is not null and items.amount <> 0
      and not exists (
          select 1 from billed_components
          where billed_components.workload_id = active_months.workload_id
            and billed_components.period = active_months.period
            and billed_components.component = items.component
      )
),

gpu_cost_months as (
    -- All GPU cost of the workload-month: priced GPU work (compute, checkpoints, failed work, queue) and
    -- GPU bill lines (compute and idle), so bill-priced inference carries observability too.
    select workload_id, period, currency, sum(amount) as gpu_cost
    from gpu_work
    where basis = 'production'
    group by all
    union all
    select workload_id, period, currency, sum(amount)
    from billed
    where component in ('gpu_compute', 'idle_capacity')
    group by all
),

observability as (
    select 'production' as basis, workload_id, period, currency, 'observability' as component,
           {{ money('sum(gpu_cost) * cast(max(policies.observability_share) as decimal(10, 6))') }} as amount,
           'policy' as source_kind, workload_id || ':' || cast(period as string) || ':observability' as source_ref,
           'observability_share x GPU cost (priced work and GPU bill lines)' as detail,
           cast(null as string) as cause
    from gpu_cost_months, policies
    where policies.observability_share > 0
    group by workload_id, period, currency
),

before_labor as (
    select * from direct
    union all select * from assumed
    union all select * from observability
),

fleet_active_days as (
    -- Days of the month on which any workload was active (the union of every workload's active days).
    -- Platform labour is a monthly run-rate: only the part of the month the platform served work is a
    -- cost of the month's workloads, as the registry estimates are prorated to the workload's own days.
    select period, count(distinct day) as active_days
    from (
        select date_trunc('month', day)::date as period, day from activity where workload_id is not null
    ) as days
    group by period
),

labor_weights as (
    select workload_id, period, sum(amount) as direct_amount,
           sum(sum(amount)) over (partition by period) as month_amount
    from before_labor
    where basis = 'production' and currency = (select platform_labor_currency from policies)
    group by workload_id, period
),

labor_months as (
    -- The month's labour that workloads carry: platform_labor_monthly x active days / days in the month.
    -- The rest of the month (no workload ran) is not a workload cost and is in no line: the policy is a
    -- run-rate of the platform team, not an invoice (docs/cost_model.md, "Platform labour").
    select fleet_active_days.period, fleet_active_days.active_days,
           day(last_day(fleet_active_days.period)) as month_days,
           {{ money('policies.platform_labor_monthly * cast(fleet_active_days.active_days as decimal(10, 0))
                     / cast(day(last_day(fleet_active_days.period)) as decimal(10, 0))') }} as labor_amount
    from fleet_active_days, policies
    where policies.platform_labor_monthly > 0
),

platform_labor as (
    -- The month's active labour (drivers, CUDA, serving stack upkeep, on-call) spread over the month's
    -- workloads by their share of direct cost; shares sum to the prorated amount.
    select 'production' as basis, labor_weights.workload_id, labor_weights.period,
           policies.platform_labor_currency as currency, 'platform_labor' as component,
           {{ money('labor_months.labor_amount * cast(labor_weights.direct_amount / labor_weights.month_amount as decimal(38, 12))') }}
               as amount,
           'policy' as source_kind,
           labor_weights.workload_id || ':' || cast(labor_weights.period as string) || ':platform_labor' as source_ref,
           'platform_labor_monthly x ' || cast(labor_months.active_days as string) || '/'
               || cast(labor_months.month_days as string)
               || ' days with workload activity x share of the direct cost of the month' as detail,
           cast(null as string) as cause
    from labor_weights
    inner join labor_months on labor_months.period = labor_weights.period
    cross join policies
    where labor_weights.month_amount > 0
),

final as (
    select * from before_labor
    union all select * from platform_labor
)

select
    md5(final.basis || '|' || final.workload_id || '|' || final.source_kind || '|' || final.source_ref || '|' || final.component)
        as cost_line_id,
    final.*,
    -- the month's input stamps, when the month was built, the latest file load and history key it saw
    digests.digest as x_inputs_digest,
    cast({{ dbt.current_timestamp() }} as timestamp) as x_built_at,
    {{ latest_file_load() }} as x_loaded_at,
    (select max(x_history_key) from {{ ref('int_workload_cost_lines_history_key') }}) as x_history_key
from final
left join ({{ month_stamp_digests(cost_lines_stamps()) }}) as digests on digests.month = final.period
