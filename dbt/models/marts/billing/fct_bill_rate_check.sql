-- The bill's rate against the provider's list, per provider x SKU x region x pricing category x
-- billing month x currency: the monthly view of fct_bill_vs_list_price (one row per bill
-- line). effective_per_gpu_hour = sum(EffectiveCost) / sum(GPU-hours); list_per_gpu_hour = the
-- on-demand list price per GPU-hour valid at each line's start, weighted by the line's GPU-hours
-- (lines without a list price left out of both sides of the ratio); the flag follows the same rules
-- and tolerance as the per-line table, applied to the month.
with lines as (
    select * from {{ ref('fct_bill_vs_list_price') }}
),

grouped as (
    select
        provider, instance_type, gpu_model, region, pricing_category, billing_period_start, currency,
        count(*) as lines,
        sum(gpu_hours) as gpu_hours,
        sum(billed_cost) as billed_cost,
        sum(effective_cost) as effective_cost,
        sum(case when list_per_gpu_hour is not null then gpu_hours end) as listed_gpu_hours,
        sum(case when list_per_gpu_hour is not null then effective_cost end) as listed_effective_cost,
        sum(list_per_gpu_hour * gpu_hours) as list_cost,
        sum(case when flag = 'discount_uncaptured' then 1 else 0 end) as committed_lines,
        max(tolerance) as tolerance
    from lines
    group by provider, instance_type, gpu_model, region, pricing_category, billing_period_start, currency
),

final as (
    select
        provider, instance_type, gpu_model, region, pricing_category, billing_period_start, currency,
        lines, gpu_hours, billed_cost, effective_cost,
        cast(effective_cost / gpu_hours as decimal(38, 12)) as effective_per_gpu_hour,
        cast(list_cost / listed_gpu_hours as decimal(38, 12)) as list_per_gpu_hour,
        case when list_cost > 0 then cast(listed_effective_cost / list_cost as decimal(18, 6)) end as ratio,
        case
            when effective_cost / gpu_hours
                 > {{ plausibility('max_per_gpu_hour') }} * {{ units_per_usd_ceiling('currency') }} then 'implausible'
            when list_cost is null then 'no_list_price'
            when listed_effective_cost / list_cost > 1 + tolerance then 'overbilled'
            when committed_lines > 0 then 'discount_uncaptured'
            when pricing_category = 'Standard' and listed_effective_cost / list_cost < 1 - tolerance then 'below_list'
            else 'ok'
        end as flag
    from grouped
    where gpu_hours > 0
)

select * from final
