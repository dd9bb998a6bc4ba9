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

final as (
    select
        daily.site,
        daily.pool_id,
        daily.gpu_model,
        daily.day,
        daily.capacity_basis,
        daily.capacity_gpu_hours,
        daily.allocated_gpu_hours,
        daily.unallocated_gpu_hours,
        daily.over_allocation_gpu_hours,
        rates.rate_per_gpu_hour,
        coalesce(rates.currency, 'USD') as currency,
        {{ money('daily.capacity_gpu_hours * rates.rate_per_gpu_hour') }} as capacity_cost,
        {{ money('daily.priced_allocated_gpu_hours * rates.rate_per_gpu_hour') }} as allocated_cost,
        {{ money('daily.unallocated_gpu_hours * rates.rate_per_gpu_hour') }} as idle_cost,
        case
            when rates.site is null then 'GPU model ' || daily.gpu_model || ' is not in the GPU catalog'
            when rates.rate_per_gpu_hour is null then 'owned_hardware policy has no ' || rates.missing_inputs
        end as unpriced_reason
    from daily
    left join rates on rates.site = daily.site and rates.gpu_model = daily.gpu_model
)

select * from final
