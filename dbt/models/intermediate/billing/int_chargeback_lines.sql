-- Every invoice amount as a chargeback line: cloud bill lines (direct to a team, shared, or
-- unallocated) and LLM API spend (its own invoice), per billing period and currency. Shared
-- lines (governance, security, identity and management services with no team tag, or lines
-- tagged to the 'shared' team) are spread over the period's teams by their direct cost share
-- (policy shared_cost_split); the spread amounts add up to the shared pool to the cent.
-- Idle GPU time on GPU bill lines (int_gpu_idle_by_workload) follows the registry's idle_policy:
-- `separate` shows it on an '(idle)' row, `owner_team` leaves it with the line's team as idle
-- cost, `share_by_usage` spreads it over the period's teams by used GPU-hours.
with ledger as (
    select ledger.*, coalesce(idle.idle_share, 0) as idle_share
    from {{ ref('ledger_focus') }} as ledger
    left join {{ ref('int_gpu_idle_by_workload') }} as idle
        on idle.workload_id = ledger.x_workload_id and idle.day = cast(ledger.ChargePeriodStart as date)
        and ledger.x_gpu_model is not null and ledger.ChargeCategory = 'Usage'
),

policies as (
    select * from {{ ref('int_cost_policies') }}
),

api as (
    select * from {{ ref('fct_api_spend_daily') }}
),

bill as (
    select
        cast(BillingPeriodStart as date) as billing_period_start,
        BillingCurrency as currency,
        case
            when ChargeCategory = 'Credit' then 'credits'
            when ChargeCategory = 'Tax' then 'tax'
            when x_team = 'shared'
                or (x_team = '(unallocated)'
                    and ServiceCategory in ('Management and Governance', 'Security', 'Identity'))
                then 'shared_pool'
            else 'direct_cost'
        end as line_kind,
        x_team as team_id,
        {{ money('BilledCost - ' ~ money('BilledCost * cast(idle_share as decimal(18, 12))')) }} as amount
    from ledger
),

idle_parts as (
    select cast(BillingPeriodStart as date) as billing_period_start, BillingCurrency as currency, x_team,
           {{ money('BilledCost * cast(idle_share as decimal(18, 12))') }} as amount
    from ledger
    where idle_share > 0
),

usage_weights as (
    select cast(date_trunc('month', day) as date) as billing_period_start, team_id, sum(used_gpu_hours) as used
    from {{ ref('fct_gpu_utilisation_daily') }}
    where team_id <> '(unallocated)' and used_gpu_hours > 0
    group by all
),

idle_pool as (
    select billing_period_start, currency, sum(amount) as pool_amount from idle_parts group by all
),

idle_shared as (
    select idle_pool.billing_period_start, idle_pool.currency, usage_weights.team_id, idle_pool.pool_amount,
           cast(round(idle_pool.pool_amount * cast(usage_weights.used / sum(usage_weights.used) over (
               partition by idle_pool.billing_period_start, idle_pool.currency) as decimal(38, 12)), 12)
               as decimal(38, 12)) as amount,
           row_number() over (partition by idle_pool.billing_period_start, idle_pool.currency
                              order by usage_weights.used desc, usage_weights.team_id) as rank
    from idle_pool
    inner join usage_weights using (billing_period_start)
),

idle_lines as (
    select billing_period_start, currency, 'idle_cost' as line_kind,
           case policies.idle_policy when 'owner_team' then x_team else '(idle)' end as team_id, amount
    from idle_parts, policies
    where policies.idle_policy <> 'share_by_usage'
       or not exists (select 1 from idle_shared where idle_shared.billing_period_start = idle_parts.billing_period_start)
    union all
    select billing_period_start, currency, 'idle_cost', team_id,
           amount + case when rank = 1
                         then pool_amount - sum(amount) over (partition by billing_period_start, currency)
                         else 0 end
    from idle_shared, policies
    where policies.idle_policy = 'share_by_usage'
),

api_lines as (
    select cast(date_trunc('month', day) as date) as billing_period_start, currency, 'api_cost' as line_kind,
           coalesce(team_id, '(unallocated)') as team_id, cost as amount
    from api
),

direct_weights as (
    select billing_period_start, currency, team_id, sum(amount) as direct
    from bill
    where line_kind = 'direct_cost' and team_id <> '(unallocated)'
    group by all
),

weights as (
    select *, direct / sum(direct) over (partition by billing_period_start, currency) as share,
           row_number() over (partition by billing_period_start, currency order by direct desc, team_id) as rank
    from direct_weights
    qualify sum(direct) over (partition by billing_period_start, currency) > 0
),

pool as (
    select billing_period_start, currency, sum(amount) as pool_amount
    from bill
    where line_kind = 'shared_pool'
    group by all
),

spread as (
    select pool.billing_period_start, pool.currency, weights.team_id, weights.rank,
           cast(round(pool.pool_amount * cast(weights.share as decimal(38, 12)), 12) as decimal(38, 12)) as amount,
           pool.pool_amount
    from pool
    inner join weights using (billing_period_start, currency)
),

spread_balanced as (
    -- Rounding remainder goes to the largest team so the pool is conserved exactly.
    select billing_period_start, currency, 'shared_cost' as line_kind, team_id,
           amount + case when rank = 1
                         then pool_amount - sum(amount) over (partition by billing_period_start, currency)
                         else 0 end as amount
    from spread
),

unspread_pool as (
    -- A period with shared cost but no directly charged team keeps the pool unallocated.
    select billing_period_start, currency, 'shared_cost' as line_kind, '(unallocated)' as team_id, pool_amount as amount
    from pool
    where not exists (
        select 1 from weights
        where weights.billing_period_start = pool.billing_period_start and weights.currency = pool.currency
    )
),

final as (
    select billing_period_start, currency, line_kind, team_id, amount from bill where line_kind <> 'shared_pool'
    union all select * from spread_balanced
    union all select * from unspread_pool
    union all select * from api_lines
    union all select * from idle_lines
)

select * from final
