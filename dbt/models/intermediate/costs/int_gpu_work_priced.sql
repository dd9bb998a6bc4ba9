{{ config(
    materialized='incremental',
    incremental_strategy=gpu_ledger.day_incremental_strategy(),
    partition_by=gpu_ledger.day_partition_by('x_event_day'),
    unique_key='x_event_day',
    on_schema_change='append_new_columns',
    pre_hook=[
        {"sql": "{{ gpu_ledger.clear_when_history_changed(ref('int_gpu_work_priced_history_key'), [('x_built_at', 'timestamp')]) }}", "transaction": false},
        {"sql": "{{ gpu_ledger.clear_days('x_event_day', gpu_ledger.gpu_work_priced_changed_days()) }}", "transaction": false}
    ]
) }}
-- GPU work priced per GPU-hour as of when it ran. Every row gets a pricing_status:
--   'owned-hardware': usage on an owned site (registry owned_hardware.sites) at the site's cost of
--     a GPU-hour (int_owned_hardware_rates: capex amortisation + power + operations);
--   'list-priced': the observed price of the same provider, GPU model and pricing category valid at
--     that time (reference region first, then the cheapest region); when the category was never
--     observed, the on-demand rate times the registry's pricing_category_factors, labelled "assumed"; a run
--     record that names no category is priced on-demand, labelled "assumed" too.
--     A run record whose provider has no price for the GPU borrows the cheapest observed provider,
--     labelled so;
--   'unpriced': no rate, with the reason (unpriced_reason) and a NULL amount, never 0: unknown GPU
--     model; scheduler/telemetry usage with no provider (its pool is on no bill line, no owned site
--     and no usage_providers entry); no observed USD price for the GPU model; a pricing category
--     with no factor (before, the factor silently fell back to 1); an owned site missing an input.
-- Incremental by UTC day (x_event_day, int_gpu_work_events'): a row is one work row priced by rules and
-- prices that span all history, so a run rebuilds the days int_gpu_work_events wrote since this model last
-- did or no longer holds (macros/gpu_work_days.sql) and the backfill window; every day when
-- int_gpu_work_priced_history_key changed (the price history, owned-hardware rates, registry files, the
-- SQL and seeds upstream).
{%- if is_incremental() %}
    {%- set plan = history_days(gpu_work_priced_changed_days(), ref('int_gpu_work_priced_history_key')) %}
{%- else %}
    {%- set plan = {'all': true, 'days': []} %}
{%- endif %}
with events as (
    select {{ star_except(['x_runs_digest', 'x_loaded_at', 'x_history_key', 'x_built_at']) }}
    from {{ ref('int_gpu_work_events') }}
    where {{ in_plan('x_event_day', plan) }}
),

policies as (
    select * from {{ ref('int_cost_policies') }}
),

owned_rates as (
    select * from {{ ref('int_owned_hardware_rates') }}
),

rates as (
    select * from {{ ref('fct_gpu_price_history') }}
    where gpu_model is not null and price_per_gpu_hour > 0 and currency = 'USD'
),

-- Only work that can take a list price: a known GPU model, not on owned hardware, and a provider
-- unless it is a run record (usage from a pool with no provider is unpriced, not guessed).
list_events as (
    select * from events
    where gpu_model is not null and not coalesce(is_owned_site, false)
      and (provider is not null or pool_id is null)
),

candidates as (
    select
        list_events.event_id,
        rates.price_interval_id,
        rates.provider as rate_provider,
        rates.sku,
        rates.region,
        rates.pricing_category as rate_category,
        rates.price_per_gpu_hour,
        rates.first_observed_at,
        rates.source as rate_source,
        rates.provider = list_events.provider as same_provider,
        -- A run record naming no pricing_category is priced on-demand, labelled (rate_basis): NULL here made
        -- every rule below NULL, and the line reached the cost lines with no amount and no reason.
        rates.pricing_category = coalesce(list_events.pricing_category, 'on-demand') as same_category,
        rates.region = {{ json_text('policies.reference_regions', 'rates.provider') }} as reference_region,
        rates.valid_from <= list_events.event_at and (rates.valid_to is null or list_events.event_at < rates.valid_to) as valid_then,
        abs({{ seconds_between('rates.valid_from', 'list_events.event_at') }}) as seconds_away
    from list_events
    cross join policies
    inner join rates
        on rates.gpu_model = list_events.gpu_model
        and rates.pricing_category in (list_events.pricing_category, 'on-demand')
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

joined as (
    select
        events.*,
        best.event_id is not null as has_list_price,
        best.rate_provider,
        best.sku as rate_sku,
        best.region as rate_region,
        best.price_interval_id,
        best.first_observed_at as list_price_observed_at,
        best.rate_source,
        best.same_provider,
        best.same_category,
        best.valid_then,
        best.price_per_gpu_hour,
        cast({{ json_text('policies.pricing_category_factors', 'events.pricing_category') }} as decimal(10, 6)) as category_factor,
        owned_rates.gpu_model is not null as owned_model_known,
        owned_rates.rate_per_gpu_hour as owned_rate,
        owned_rates.currency as owned_currency,
        owned_rates.missing_inputs as owned_missing_inputs
    from events
    cross join policies
    left join best on best.event_id = events.event_id
    left join owned_rates
        on coalesce(events.is_owned_site, false)
        and owned_rates.site = events.site
        and owned_rates.gpu_model = events.gpu_model
),

statused as (
    select
        *,
        case
            when gpu_model is null then 'unknown GPU model'
            when coalesce(is_owned_site, false) and not owned_model_known
                then 'owned site ' || site || ': GPU model ' || gpu_model || ' is not in the GPU catalog'
            when coalesce(is_owned_site, false) and owned_rate is null
                then 'owned site ' || site || ': owned_hardware policy has no ' || coalesce(owned_missing_inputs, 'rate')
                     || ' for ' || gpu_model
            when coalesce(is_owned_site, false) then null
            when pool_id is not null and provider is null
                then 'no provider: ' || pool_id || ' is on no bill line, no owned_hardware site and no usage_providers entry'
            when not has_list_price then 'no observed USD price for ' || gpu_model
            when not same_category and category_factor is null
                then 'no pricing_category_factors entry for ' || coalesce(pricing_category, '(none)')
        end as unpriced_reason
    from joined
),

final as (
    select
        {{ star_except(['has_list_price', 'same_provider', 'same_category', 'valid_then', 'price_per_gpu_hour',
                        'category_factor', 'owned_model_known', 'owned_rate', 'owned_currency',
                        'owned_missing_inputs', 'list_price_observed_at',
                        'rate_source'], 'statused') }},
        case
            when unpriced_reason is not null then 'unpriced'
            when coalesce(is_owned_site, false) then 'owned-hardware'
            else 'list-priced'
        end as pricing_status,
        case
            when unpriced_reason is not null then null
            when coalesce(is_owned_site, false) then owned_rate
            when same_category then price_per_gpu_hour
            else {{ money('price_per_gpu_hour * category_factor') }}
        end as rate_per_gpu_hour,
        case
            when unpriced_reason is not null then null
            when coalesce(is_owned_site, false) then owned_currency
            else 'USD'
        end as currency,
        case
            when unpriced_reason is not null then null
            when coalesce(is_owned_site, false) then 'owned_hardware policy, site ' || site
            else 'price history ' || rate_provider || ' ' || coalesce(rate_region, '(no region)') || ' '
                 || coalesce(rate_sku, '(no sku)') || coalesce(' (' || rate_source || ')', '')
        end as price_source,
        case when unpriced_reason is null and not coalesce(is_owned_site, false) then list_price_observed_at end
            as price_observed_at,
        case
            when unpriced_reason is not null then unpriced_reason
            when coalesce(is_owned_site, false)
                then 'capex / amortisation + power + operations per GPU-hour (site ' || site || ')'
            else concat_ws('; ',
                case when not same_provider or provider is null
                     then 'price of ' || rate_provider || ' (none observed for ' || coalesce(provider, 'no provider') || ')' end,
                case when pricing_category is null then 'assumed: on-demand (the run names no pricing_category)' end,
                case when not same_category then 'assumed: on-demand x ' || pricing_category || ' factor' end,
                case when not valid_then then 'nearest observation in time, not valid at run time' end)
        end as rate_basis
    from statused
)

select
    *,
    {{ money('rate_per_gpu_hour * cast(gpu_hours as decimal(38, 6))') }} as amount,
    (select max(x_history_key) from {{ ref('int_gpu_work_priced_history_key') }}) as x_history_key,
    -- the latest file load when the day was built (the models by day keep it; no rule here reads it)
    {{ latest_file_load() }} as x_loaded_at,
    cast({{ dbt.current_timestamp() }} as timestamp) as x_built_at
from final
