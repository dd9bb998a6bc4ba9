-- Owned capacity nobody held, priced and placed (docs/cost_model.md, "Physical GPUs"). Grain: site x
-- pool x GPU model x month x team. The idle_policy places it as cloud idle is placed:
--   separate        the '(idle)' team (the default);
--   share_by_usage  the teams that held GPUs of the same pool and model that month, by their allocated
--                   GPU-hours (the '(idle)' team when nobody held any);
--   owner_team      the site's owner_team (owned_hardware.sites entry), else the '(idle)' team.
-- Unpriced capacity (a missing rate input) is not here: fct_owned_capacity_daily lists it with the reason.
with capacity as (
    select * from {{ ref('fct_owned_capacity_daily') }}
    where idle_cost is not null and unallocated_gpu_hours > 0
),

policies as (
    select idle_policy from {{ ref('int_cost_policies') }}
),

pool_sites as (
    select * from {{ ref('int_gpu_pool_sites') }}
    where is_owned
),

monthly as (
    select
        capacity.site,
        capacity.pool_id,
        capacity.gpu_model,
        cast(date_trunc('month', capacity.day) as date) as period,
        capacity.currency,
        sum(capacity.unallocated_gpu_hours) as gpu_hours,
        sum(capacity.idle_cost) as amount
    from capacity
    group by all
),

usage_weights as (
    select
        pool_id,
        coalesce(gpu_model, '(unknown)') as gpu_model,
        cast(date_trunc('month', hour_start) as date) as period,
        team_id,
        sum(allocated_gpu_hours) as weight
    from {{ ref('int_gpu_usage_hourly') }}
    -- the pools with owned idle to spread only: a share is a pool's (partition by pool), and the rest of
    -- the fleet's usage history is never read (a fleet with no owned capacity reads none)
    where allocated_gpu_hours > 0 and pool_id in (select pool_id from capacity)
    group by all
),

shares as (
    select
        usage_weights.*,
        usage_weights.weight / sum(usage_weights.weight) over (
            partition by usage_weights.pool_id, usage_weights.gpu_model, usage_weights.period) as share
    from usage_weights
),

shared_months as (
    select distinct pool_id, gpu_model, period from shares
),

placed as (
    select
        monthly.site, monthly.pool_id, monthly.gpu_model, monthly.period, monthly.currency,
        shares.team_id,
        'share_by_usage' as method,
        monthly.gpu_hours * shares.share as gpu_hours,
        monthly.amount * cast(shares.share as decimal(18, 12)) as amount
    from monthly
    cross join policies
    inner join shares
        on shares.pool_id = monthly.pool_id and shares.gpu_model = monthly.gpu_model and shares.period = monthly.period
    where policies.idle_policy = 'share_by_usage'
    union all
    select
        monthly.site, monthly.pool_id, monthly.gpu_model, monthly.period, monthly.currency,
        case when policies.idle_policy = 'owner_team'
             then coalesce({{ json_text('pool_sites.site_policy', "'owner_team'") }}, '(idle)')
             else '(idle)' end as team_id,
        case when policies.idle_policy = 'owner_team' and {{ json_text('pool_sites.site_policy', "'owner_team'") }} is not null
                 then 'owner_team'
             when policies.idle_policy = 'owner_team' then 'owner_team: the site names no owner_team'
             when policies.idle_policy = 'share_by_usage' then 'share_by_usage: nobody held a GPU this month'
             else 'separate' end as method,
        monthly.gpu_hours,
        monthly.amount
    from monthly
    cross join policies
    left join pool_sites on pool_sites.pool_id = monthly.pool_id
    left join shared_months
        on shared_months.pool_id = monthly.pool_id and shared_months.gpu_model = monthly.gpu_model
        and shared_months.period = monthly.period
    where policies.idle_policy <> 'share_by_usage' or shared_months.pool_id is null
),

final as (
    select
        site,
        pool_id,
        gpu_model,
        period,
        currency,
        team_id,
        method,
        cast(round(sum(gpu_hours), 9) as decimal(38, 9)) as gpu_hours,
        {{ money('sum(amount)') }} as amount
    from placed
    group by site, pool_id, gpu_model, period, currency, team_id, method
)

select * from final
