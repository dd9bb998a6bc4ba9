-- Catches two validity intervals of the same price key that overlap in time (the history would
-- then state two prices for one moment).
with history as (
    select * from {{ ref('fct_gpu_price_history') }}
)

select earlier.price_interval_id, later.price_interval_id as overlapping_interval_id
from history as earlier
inner join history as later
    on earlier.provider = later.provider
    and earlier.sku = later.sku
    and earlier.region is not distinct from later.region
    and earlier.pricing_category = later.pricing_category
    and earlier.currency = later.currency
    and earlier.price_interval_id <> later.price_interval_id
    and earlier.valid_from <= later.valid_from
where earlier.valid_to is null
    or earlier.valid_to > later.valid_from
