-- The site of every GPU pool (docs/registry.md, owned_hardware.sites and usage_providers): the first
-- matching site entry, owned sites first, then the longest pattern. Grain: pool_id (pools with a site).
-- Every pool with capacity or usage is matched, so an owned cluster nobody used in a window still has
-- its capacity priced (fct_owned_capacity_daily).
with pools as (
    select distinct pool_id from {{ ref('int_gpu_idle_hourly') }}
),

sites as (
    select * from {{ ref('int_gpu_sites') }}
),

final as (
    select pools.pool_id, sites.site, sites.is_owned, sites.provider, sites.pricing_category, sites.site_policy
    from pools
    inner join sites on lower(pools.pool_id) like sites.like_pattern
    qualify row_number() over (
        partition by pools.pool_id
        order by sites.site_priority, length(sites.pattern) desc, sites.site
    ) = 1
)

select * from final
