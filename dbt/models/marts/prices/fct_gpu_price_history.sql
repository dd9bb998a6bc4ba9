-- GPU price validity intervals per (provider, sku, region, pricing_category, currency):
-- gaps-and-islands over the observations in time order. A run of equal prices is one interval:
-- valid_from = its first observation, valid_to = the first observation of the next different
-- price (null while current). Observing an unchanged price again extends the interval's
-- last_observed_at and observations; it never adds a row. The true change happened somewhere
-- between last_observed_at and valid_to; the interval states what was observed.
with observed as (
    select * from {{ ref('int_gpu_prices_observed') }}
    where is_mapped
),

sequenced as (
    select
        *,
        lag(price) over price_key as previous_price,
        lag(price_unit) over price_key as previous_price_unit
    from observed
    window price_key as (
        partition by provider, sku, region, pricing_category, currency
        order by observed_at, price
    )
),

flagged as (
    select
        *,
        case
            when previous_price is null then 1
            when previous_price <> price or previous_price_unit <> price_unit then 1
            else 0
        end as starts_interval
    from sequenced
),

islands as (
    select
        *,
        sum(starts_interval) over (
            partition by provider, sku, region, pricing_category, currency
            order by observed_at, price
            rows between unbounded preceding and current row
        ) as interval_number
    from flagged
),

summarised as (
    select
        *,
        row_number() over interval_rows as row_in_interval,
        count(*) over interval_all as observations,
        max(observed_at) over interval_all as last_observed_at,
        last_value(source) over interval_all_ordered as last_source,
        last_value(source_format) over interval_all_ordered as last_source_format,
        last_value(observed_at_basis) over interval_all_ordered as last_observed_at_basis
    from islands
    window
        interval_rows as (
            partition by provider, sku, region, pricing_category, currency, interval_number
            order by observed_at, observation_id
        ),
        interval_all as (partition by provider, sku, region, pricing_category, currency, interval_number),
        interval_all_ordered as (
            partition by provider, sku, region, pricing_category, currency, interval_number
            order by observed_at, observation_id
            rows between unbounded preceding and unbounded following
        )
),

intervals as (
    select
        provider,
        sku,
        region,
        pricing_category,
        currency,
        interval_number,
        gpu_model,
        gpu_count,
        price,
        price_unit,
        price_per_hour,
        price_per_gpu_hour,
        observed_at as valid_from,
        observations,
        observed_at as first_observed_at,
        last_observed_at,
        last_observed_at_basis,
        source,
        last_source,
        source_format,
        last_source_format,
        file_hash
    from summarised
    where row_in_interval = 1
),

chained as (
    select
        *,
        lead(valid_from) over key_intervals as valid_to,
        lag(price_per_hour) over key_intervals as previous_price_per_hour
    from intervals
    window key_intervals as (
        partition by provider, sku, region, pricing_category, currency order by valid_from
    )
),

final as (
    select
        md5(
            provider || '|' || sku || '|' || coalesce(region, '') || '|' || pricing_category || '|'
            || currency || '|' || {{ ts_text('valid_from') }}
        ) as price_interval_id,
        provider,
        sku,
        region,
        pricing_category,
        currency,
        gpu_model,
        gpu_count,
        price_unit,
        price_per_hour,
        price_per_gpu_hour,
        valid_from,
        valid_to,
        observations,
        first_observed_at,
        last_observed_at,
        last_observed_at_basis,
        source,
        last_source,
        source_format,
        last_source_format,
        file_hash,
        previous_price_per_hour,
        case
            when previous_price_per_hour is null then null
            else cast(price_per_hour as double) / cast(previous_price_per_hour as double)
        end as price_change_ratio,
        valid_to is null as is_current
    from chained
)

select * from final
