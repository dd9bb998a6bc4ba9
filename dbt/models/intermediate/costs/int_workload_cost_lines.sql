-- Every cost a workload carries, one line per (source row, component), traceable to where it came
-- from: priced GPU work, LLM API requests, bill lines tagged to the workload, the registry's
-- monthly assumptions (storage, network, serving stack), media review and moderation, and the
-- shared lines spread over the month's workloads (observability, platform labour).
with policies as (
    select * from {{ ref('int_cost_policies') }}
),

workloads as (
    select * from {{ ref('stg_registry__workloads') }}
),

gpu_work as (
    -- Priced GPU work (run records; scheduler/telemetry GPU-hours on no bill line), labelled with how
    -- it was priced ('list-priced: ...', 'owned-hardware: ...'). Unpriced work has no amount and no
    -- workload line: fct_unpriced_usage lists it with its reason, as it does work with no workload.
    select basis, workload_id, date_trunc('month', event_at)::date as period, currency, component, amount,
           -- One source row can give two lines of one component (a failed run's compute and checkpoints).
           source_kind, source_ref || '#' || left(event_id, 8) as source_ref,
           pricing_status || ': ' || coalesce(nullif(rate_basis, ''), 'observed price') as detail
    from {{ ref('int_gpu_work_priced') }}
    where pricing_status <> 'unpriced' and workload_id is not null
),

api as (
    select 'production' as basis, workload_tag as workload_id, date_trunc('month', started_at)::date as period,
           currency,
           -- A failed request the provider billed is retry waste, not free.
           case when status = 'failure' then 'retry_waste' else 'api_usage' end as component,
           spend as amount, 'api_request' as source_kind, request_id as source_ref,
           provider || '/' || model as detail
    from {{ ref('stg_api_spend__requests') }}
    where workload_tag is not null and spend <> 0
),

idle as (
    select * from {{ ref('int_gpu_idle_by_workload') }}
),

billed_lines as (
    select ledger.*, coalesce(idle.idle_share, 0) as idle_share
    from {{ ref('ledger_focus') }} as ledger
    left join idle
        on idle.workload_id = ledger.x_workload_id and idle.day = cast(ledger.ChargePeriodStart as date)
        and ledger.x_gpu_model is not null and ledger.ChargeCategory = 'Usage'
    where ledger.x_workload_id is not null
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
           coalesce(ServiceName, ChargeDescription) as detail
    from billed_lines
    union all
    select 'production', x_workload_id, date_trunc('month', ChargePeriodStart)::date, BillingCurrency,
           'idle_capacity', {{ money('EffectiveCost * cast(idle_share as decimal(18, 12))') }},
           'bill_line', x_charge_key || '#idle', 'billed GPU-hours not used (usage telemetry)'
    from billed_lines
    where x_gpu_model is not null and idle_share > 0
),

media_people as (
    select 'production' as basis, workload_id, date_trunc('month', started_at)::date as period, 'USD' as currency,
           'operator_review' as component,
           {{ money('cast(operator_review_minutes / 60.0 as decimal(38, 6)) * policies.operator_hourly_rate') }} as amount,
           'media_batch' as source_kind, batch_id as source_ref, 'operator minutes x operator_hourly_rate' as detail
    from {{ ref('stg_benchmarks__media_batches') }}, policies
    where coalesce(operator_review_minutes, 0) > 0
    union all
    select 'production', workload_id, date_trunc('month', started_at)::date, 'USD', 'moderation_or_quality_filtering',
           {{ money('cast(produced as decimal(38, 6)) * policies.moderation_cost_per_asset') }},
           'media_batch', batch_id, 'produced assets x moderation_cost_per_asset'
    from {{ ref('stg_benchmarks__media_batches') }}, policies
    where coalesce(produced, 0) > 0
),

direct as (
    select * from gpu_work
    union all select * from api
    union all select * from billed
    union all select * from media_people
),

active_months as (
    select distinct workload_id, period, currency from direct where basis = 'production'
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
    -- Monthly amounts the team states in the registry (USD), charged to every month it was active.
    select 'production' as basis, active_months.workload_id, active_months.period, active_months.currency,
           items.component, {{ money('items.amount') }} as amount, 'registry_assumption' as source_kind,
           active_months.workload_id || ':' || cast(active_months.period as string) || ':' || items.key as source_ref,
           'workloads.yaml assumptions.' || items.key as detail
    from active_months
    inner join assumption_items as items on items.workload_id = active_months.workload_id
    where active_months.currency = 'USD' and items.amount is not null and items.amount <> 0
),

gpu_compute_months as (
    select workload_id, period, currency, sum(amount) as gpu_compute
    from gpu_work
    where basis = 'production' and component = 'gpu_compute'
    group by all
),

observability as (
    select 'production' as basis, workload_id, period, currency, 'observability' as component,
           {{ money('gpu_compute * cast(policies.observability_share as decimal(10, 6))') }} as amount,
           'policy' as source_kind, workload_id || ':' || cast(period as string) || ':observability' as source_ref,
           'observability_share x GPU compute' as detail
    from gpu_compute_months, policies
    where policies.observability_share > 0
),

before_labor as (
    select * from direct
    union all select * from assumed
    union all select * from observability
),

labor_weights as (
    select workload_id, period, sum(amount) as direct_amount,
           sum(sum(amount)) over (partition by period) as month_amount
    from before_labor
    where basis = 'production' and currency = (select platform_labor_currency from policies)
    group by workload_id, period
),

platform_labor as (
    -- The monthly platform labour (drivers, CUDA, serving stack upkeep, on-call) spread over the
    -- month's workloads by their share of direct cost; shares sum to the policy amount.
    select 'production' as basis, workload_id, period, policies.platform_labor_currency as currency,
           'platform_labor' as component,
           {{ money('policies.platform_labor_monthly * cast(direct_amount / month_amount as decimal(38, 12))') }} as amount,
           'policy' as source_kind, workload_id || ':' || cast(period as string) || ':platform_labor' as source_ref,
           'platform_labor_monthly x share of the direct cost of the month' as detail
    from labor_weights, policies
    where month_amount > 0 and policies.platform_labor_monthly > 0
),

final as (
    select * from before_labor
    union all select * from platform_labor
)

select
    md5(basis || '|' || workload_id || '|' || source_kind || '|' || source_ref || '|' || component) as cost_line_id,
    *
from final
