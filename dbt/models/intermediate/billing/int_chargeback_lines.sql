-- Every invoice amount as a chargeback line: cloud bill lines (direct to a team, shared, or
-- unallocated) and LLM API spend (its own invoice), per billing period and currency. Shared
-- lines (governance, security, identity and management services with no team tag, or lines
-- tagged to the 'shared' team) are spread over the period's teams by their direct cost share
-- (policy shared_cost_split); the spread amounts add up to the shared pool to the cent.
with ledger as (
    select * from {{ ref('ledger_focus') }}
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
        BilledCost as amount
    from ledger
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
)

select * from final
