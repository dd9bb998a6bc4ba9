-- One row: x_history_key, a digest of what int_gpu_work_priced applies across all history: the price
-- history (every field the rate choice reads: a new or moved price interval can reprice work of any day),
-- the owned-hardware rates, the registry files by content hash and the SQL and seeds upstream of it
-- (macros/incremental_export_days.sql registry_and_code_key). When it differs from the stored one every
-- day is rebuilt; a price observation that only confirms a known interval leaves it as it is.
with code_and_registry as (
    {{ registry_and_code_key("model.gpu_ledger.int_gpu_work_priced") }}
),

rates as (
    select {{ sorted_distinct_join("concat_ws('|', price_interval_id, provider, coalesce(sku, '~'), "
                                   ~ "coalesce(region, '~'), pricing_category, currency, coalesce(gpu_model, '~'), "
                                   ~ "cast(price_per_gpu_hour as string), cast(valid_from as string), "
                                   ~ "coalesce(cast(valid_to as string), '~'), coalesce(cast(first_observed_at as string), '~'), "
                                   ~ "coalesce(source, '~'))", '|') }} as part
    from {{ ref('fct_gpu_price_history') }}
),

owned as (
    select {{ sorted_distinct_join(row_text('o'), '|') }} as part from {{ ref('int_owned_hardware_rates') }} as o
)

select md5(concat_ws('#', code_and_registry.x_history_key, coalesce(rates.part, ''), coalesce(owned.part, '')))
    as x_history_key
from code_and_registry
cross join rates
cross join owned
