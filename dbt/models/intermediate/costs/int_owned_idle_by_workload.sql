-- Owned capacity nobody held, as part of the unit cost of the work the site did (docs/cost_model.md,
-- "Physical GPUs"), as GPU bill lines carry their idle share into unit costs whatever idle_policy says.
-- Grain: site x pool x GPU model x month x workload. Each month's idle cost of a pool and GPU model
-- (fct_owned_capacity_daily) is spread over everything allocated there that month by allocated
-- GPU-hours; the workloads' parts become idle_capacity cost lines (int_workload_cost_lines). Parts of
-- work with no workload reach no unit cost. Showback and budgets place the same idle by idle_policy
-- (int_owned_idle_lines), so this model never adds to them.
with capacity as (
    select * from {{ ref('fct_owned_capacity_daily') }}
    where idle_cost is not null and unallocated_gpu_hours > 0
),

monthly as (
    select site, pool_id, gpu_model, cast(date_trunc('month', day) as date) as period, currency,
           sum(idle_cost) as amount
    from capacity
    group by all
),

weights as (
    select
        pool_id,
        coalesce(gpu_model, '(unknown)') as gpu_model,
        cast(date_trunc('month', hour_start) as date) as period,
        workload_id,
        sum(allocated_gpu_hours) as weight
    from {{ ref('int_gpu_usage_hourly') }}
    -- the pools with owned idle to spread only: a share is a pool's (partition by pool), and the rest of
    -- the fleet's usage history is never read (a fleet with no owned capacity reads none)
    where allocated_gpu_hours > 0 and pool_id in (select pool_id from capacity)
    group by all
),

shares as (
    select weights.*,
           weights.weight / sum(weights.weight) over (partition by pool_id, gpu_model, period) as share
    from weights
),

final as (
    select
        monthly.site,
        monthly.pool_id,
        monthly.gpu_model,
        monthly.period,
        monthly.currency,
        shares.workload_id,
        cast(round(shares.share, 12) as decimal(18, 12)) as share,
        {{ money('monthly.amount * cast(shares.share as decimal(18, 12))') }} as amount
    from monthly
    inner join shares
        on shares.pool_id = monthly.pool_id and shares.gpu_model = monthly.gpu_model and shares.period = monthly.period
    where shares.workload_id is not null
)

select * from final
