-- GPU work priced per GPU-hour as of when it ran. The rate is the observed price of the same
-- provider, GPU model and pricing category valid at that time (reference region first, then the
-- cheapest region); when the category was never observed, the on-demand rate times the
-- registry's pricing_category_factors, labelled "assumed". No price for the provider at all:
-- the cheapest observed provider for that GPU, labelled so.
with events as (
    select * from {{ ref('int_gpu_work_events') }}
),

policies as (
    select * from {{ ref('int_cost_policies') }}
),

rates as (
    select * from {{ ref('fct_gpu_price_history') }}
    where gpu_model is not null and price_per_gpu_hour > 0 and currency = 'USD'
),

candidates as (
    select
        events.event_id,
        rates.price_interval_id,
        rates.provider as rate_provider,
        rates.sku,
        rates.region,
        rates.pricing_category as rate_category,
        rates.price_per_gpu_hour,
        rates.provider = events.provider as same_provider,
        rates.pricing_category = events.pricing_category as same_category,
        rates.region = {{ json_text('policies.reference_regions', 'rates.provider') }} as reference_region,
        rates.valid_from <= events.event_at and (rates.valid_to is null or events.event_at < rates.valid_to) as valid_then,
        abs({{ seconds_between('rates.valid_from', 'events.event_at') }}) as seconds_away
    from events
    cross join policies
    inner join rates
        on rates.gpu_model = events.gpu_model
        and rates.pricing_category in (events.pricing_category, 'on-demand')
),

best as (
    select *
    from candidates
    qualify row_number() over (
        partition by event_id
        order by same_provider desc, same_category desc, valid_then desc, reference_region desc nulls last,
                 case when valid_then then 0 else seconds_away end, price_per_gpu_hour, price_interval_id
    ) = 1
),

final as (
    select
        events.*,
        best.rate_provider,
        best.sku as rate_sku,
        best.region as rate_region,
        best.price_interval_id,
        case
            when best.same_category then best.price_per_gpu_hour
            else cast(best.price_per_gpu_hour * coalesce(
                cast({{ json_text('policies.pricing_category_factors', 'events.pricing_category') }} as decimal(10, 6)), 1) as decimal(38, 12))
        end as rate_per_gpu_hour,
        'USD' as currency,
        concat_ws('; ',
            case when best.event_id is null then 'no observed price for this GPU model' end,
            case when not best.same_provider then 'price of ' || best.rate_provider || ' (none observed for ' || events.provider || ')' end,
            case when not best.same_category then 'assumed: on-demand x ' || events.pricing_category || ' factor' end,
            case when not best.valid_then then 'nearest observation in time, not valid at run time' end
        ) as rate_basis
    from events
    cross join policies
    left join best on best.event_id = events.event_id
)

select
    *,
    {{ money('rate_per_gpu_hour * cast(gpu_hours as decimal(38, 6))') }} as amount
from final
