-- The GPU-hours no bill line prices, and how the ledger prices them instead (docs/cost_model.md,
-- "Unpriced usage"; named fct_unpriced_usage before, although most rows are priced: fct_unpriced_usage is
-- now the 'unpriced' rows only, the loud gaps). Production GPU work (run records, and scheduler / telemetry GPU-hours
-- that no bill line and no run record covers: int_gpu_usage_unbilled) per source, team, workload,
-- GPU model, provider/site, day and pricing: 'list-priced' (price history as of the day it ran),
-- 'owned-hardware' (owned_hardware policy) or 'unpriced' (NULL amount and a reason, never 0).
-- GPU-hours already on a bill line are not here (they are in ledger_focus, at EffectiveCost).
with priced as (
    select * from {{ ref('int_gpu_work_priced') }}
    where basis = 'production'
),

workloads as (
    select workload_id, team_id from {{ ref('stg_registry__workloads') }}
),

grouped as (
    select
        cast(priced.event_at as date) as day,
        priced.source_kind,
        coalesce(priced.team_id, workloads.team_id, '(unallocated)') as team_id,
        priced.workload_id,
        coalesce(priced.gpu_model, '(unknown)') as gpu_model,
        priced.provider,
        coalesce(priced.site, priced.pool_id, priced.provider) as site,
        priced.pricing_status,
        priced.unpriced_reason as reason,
        priced.rate_per_gpu_hour,
        priced.currency,
        priced.price_source,
        priced.price_observed_at,
        nullif(priced.rate_basis, '') as price_basis,
        sum(priced.gpu_hours) as gpu_hours,
        sum(priced.amount) as amount,
        count(*) as work_items
    from priced
    left join workloads on workloads.workload_id = priced.workload_id
    group by all
),

final as (
    select
        md5(concat_ws('|', cast(day as string), source_kind, team_id, coalesce(workload_id, ''), gpu_model,
                      coalesce(provider, ''), coalesce(site, ''), pricing_status, coalesce(reason, ''),
                      coalesce(cast(rate_per_gpu_hour as string), ''), coalesce(currency, ''),
                      coalesce(price_source, ''), coalesce(cast(price_observed_at as string), ''),
                      coalesce(price_basis, ''))) as unpriced_usage_id,
        day,
        source_kind,
        team_id,
        workload_id,
        gpu_model,
        provider,
        site,
        pricing_status,
        reason,
        gpu_hours,
        rate_per_gpu_hour,
        currency,
        {{ money('amount') }} as amount,
        price_source,
        price_observed_at,
        price_basis,
        work_items
    from grouped
)

select * from final
