-- All-in showback per team, month, currency and component: what the team's work really cost,
-- on a bill or not. Two sources, never overlapping:
--   chargeback  the invoice lines as allocated to teams on the amortised basis (EffectiveCost:
--               direct, shared, idle, unused commitment, credits, tax) and the API spend (its
--               own invoice, basis 'billed'); identical to fct_chargeback_monthly.amortised_cost
--               + api_cost;
--   cost model  the workload cost lines that are on no bill (fct_workload_cost_lines without
--               bill lines and API requests, which the chargeback already holds): run-priced GPU
--               work (training, eval, media, benchmark runs, scheduler/telemetry GPU-hours on no
--               bill line; 'list-priced', or 'owned-hardware' on owned sites), the registry's
--               monthly assumptions, review and moderation at policy rates, observability and
--               platform labour ('estimate'). A cost line goes to its workload's owning team. Priced
--               GPU work of a team with no workload (a Slurm account, a namespace) is a team-level
--               line: every team with GPU use is shown back.
--   owned hardware  GPU work on owned sites at the site's rate ('owned-hardware': the workload cost
--               lines priced so, and team-level work), plus the site's capacity nobody held
--               (int_owned_idle_lines, placed by idle_policy), so a site's month sums to its capacity
--               x rate (fct_owned_capacity_daily).
-- bridge_step names the step of fct_cost_bridge the row adds to.
with chargeback_lines as (
    select * from {{ ref('int_chargeback_lines') }}
    where basis = 'amortised'
),

cost_lines as (
    -- Bill lines and API requests are in the chargeback; owned idle is placed by idle_policy (owned_idle).
    select * from {{ ref('int_workload_cost_lines') }}
    where source_kind not in ('bill_line', 'api_request', 'owned_idle')
),

workloads as (
    select * from {{ ref('stg_registry__workloads') }}
),

-- Priced GPU work with a team but no workload (no cost line carries it).
team_work as (
    select
        coalesce(team_id, '(unallocated)') as team_id,
        cast(date_trunc('month', event_at) as date) as period,
        currency,
        component,
        pricing_status as cost_basis,
        amount
    from {{ ref('int_gpu_work_priced') }}
    where basis = 'production' and workload_id is null and pricing_status <> 'unpriced'
),

owned_idle as (
    select * from {{ ref('int_owned_idle_lines') }}
),

invoiced as (
    select
        team_id,
        billing_period_start as period,
        currency,
        'chargeback' as source,
        'Chargeback' as bridge_step,
        line_kind as component,
        case when line_kind = 'api_cost' then 'billed' else 'amortised' end as cost_basis,
        amount
    from chargeback_lines
),

modelled_lines as (
    select
        coalesce(workloads.team_id, '(unallocated)') as team_id,
        cost_lines.period,
        cost_lines.currency,
        case when cost_lines.basis = 'benchmark' then 'benchmark_runs' else cost_lines.component end as component,
        case
            when cost_lines.source_kind in ('registry_assumption', 'policy')
                or cost_lines.component in ('platform_labor', 'operator_review', 'moderation_or_quality_filtering')
                then 'estimate'
            -- Priced GPU work carries how it was priced as the prefix of its detail.
            when cost_lines.detail like 'owned-hardware:%' then 'owned-hardware'
            else 'list-priced'
        end as cost_basis,
        cost_lines.amount
    from cost_lines
    left join workloads on workloads.workload_id = cost_lines.workload_id
),

modelled_all as (
    select * from modelled_lines
    union all
    select * from team_work
    union all
    select team_id, period, currency, 'idle_capacity' as component, 'owned-hardware' as cost_basis, amount
    from owned_idle
),

modelled as (
    select
        team_id,
        period,
        currency,
        case when cost_basis = 'owned-hardware' then 'owned hardware' else 'cost model' end as source,
        case
            when cost_basis = 'owned-hardware' then 'Owned hardware'
            when component = 'idle_capacity' then 'Idle not on a bill'
            when component = 'platform_labor' then 'Platform labour'
            when cost_basis = 'estimate' then 'Estimates'
            else 'Run-priced work not on a bill'
        end as bridge_step,
        component,
        cost_basis,
        amount
    from modelled_all
),

unioned as (
    select * from invoiced
    union all
    select * from modelled
),

final as (
    select
        team_id,
        period,
        currency,
        component,
        cost_basis,
        source,
        bridge_step,
        {{ money('sum(amount)') }} as amount,
        count(*) as cost_lines
    from unioned
    group by team_id, period, currency, component, cost_basis, source, bridge_step
)

select * from final
