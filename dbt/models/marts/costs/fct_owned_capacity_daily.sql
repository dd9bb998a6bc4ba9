-- Owned capacity priced in full (docs/cost_model.md, "Physical GPUs"): per owned site, pool, GPU model
-- and UTC day, every capacity GPU-hour at the site's rate (int_owned_hardware_rates), split into the
-- hours jobs held (allocated, priced to their teams) and the hours nobody held (unallocated, placed by
-- idle_policy: int_owned_idle_lines). capacity_cost = allocated_cost + idle_cost. Before, only the
-- allocated hours were priced and the rest of the asset's cost was nowhere.
-- A pool with no inventory (no scontrol node, no telemetry) has no known capacity: its allocated hours
-- are priced and the row says capacity_basis 'allocated only (no inventory)', a loud gap.
-- A missing rate input leaves every cost NULL with missing_inputs named (never $0).
with idle as (
    select * from {{ ref('int_gpu_idle_hourly') }}
),

pool_sites as (
    select * from {{ ref('int_gpu_pool_sites') }}
    where is_owned
),

rates as (
    select * from {{ ref('int_owned_hardware_rates') }}
),

daily as (
    select
        pool_sites.site,
        idle.pool_id,
        idle.gpu_model,
        cast(idle.hour_start as date) as day,
        case when bool_and(idle.capacity_basis = 'none') then 'allocated only (no inventory)'
             else min(case when idle.capacity_basis <> 'none' then idle.capacity_basis end) end as capacity_basis,
        sum(idle.billed_gpu_hours) as capacity_gpu_hours,
        sum(idle.allocated_gpu_hours) as allocated_gpu_hours,
        sum(idle.unallocated_gpu_hours) as unallocated_gpu_hours,
        sum(idle.over_allocation_gpu_hours) as over_allocation_gpu_hours,
        -- Allocated within capacity (an over-allocated hour is priced once, at its capacity); a pool with
        -- no capacity record prices what was allocated.
        sum(case when idle.capacity_basis = 'none' then idle.allocated_gpu_hours
                 else idle.billed_gpu_hours - idle.unallocated_gpu_hours end) as priced_allocated_gpu_hours
    from idle
    inner join pool_sites on pool_sites.pool_id = idle.pool_id
    group by pool_sites.site, idle.pool_id, idle.gpu_model, cast(idle.hour_start as date)
),

-- With no capacity record the capacity and the idle are unknown: NULL, never 0.
known as (
    select
        daily.*,
        daily.capacity_basis <> 'allocated only (no inventory)' as capacity_known
    from daily
),

final as (
    select
        known.site,
        known.pool_id,
        known.gpu_model,
        known.day,
        known.capacity_basis,
        case when known.capacity_known then known.capacity_gpu_hours end as capacity_gpu_hours,
        known.allocated_gpu_hours,
        case when known.capacity_known then known.unallocated_gpu_hours end as unallocated_gpu_hours,
        known.over_allocation_gpu_hours,
        rates.rate_per_gpu_hour,
        coalesce(rates.currency, 'USD') as currency,
        case when known.capacity_known
             then {{ money('known.capacity_gpu_hours * rates.rate_per_gpu_hour') }} end as capacity_cost,
        {{ money('known.priced_allocated_gpu_hours * rates.rate_per_gpu_hour') }} as allocated_cost,
        case when known.capacity_known
             then {{ money('known.unallocated_gpu_hours * rates.rate_per_gpu_hour') }} end as idle_cost,
        case
            when rates.site is null then 'GPU model ' || known.gpu_model || ' is not in the GPU catalog'
            when rates.rate_per_gpu_hour is null then 'owned_hardware policy has no ' || rates.missing_inputs
        end as unpriced_reason
    from known
    left join rates on rates.site = known.site and rates.gpu_model = known.gpu_model
)

select * from final
