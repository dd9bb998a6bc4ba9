-- The Stage-4 decision policies (registry policy `decisions`, docs/registry.md), one row with the
-- documented defaults: memory margin threshold, serving-runtime overhead, quality threshold, spot
-- interruption overhead, cost of capital and the host/network share of owned-hardware capex; plus
-- the pricing-category factors and the sizing target utilisation the cost model already uses.
with policies as (
    select policy, value from {{ ref('stg_registry__policies') }}
),

decisions as (
    select max(value) as value from policies where policy = 'decisions'
),

factors as (
    select max(value) as value from policies where policy = 'pricing_category_factors'
)

select
    cast(coalesce(cast({{ json_text('decisions.value', "'memory_margin_min_pct'") }} as double), 15) as double)
        as memory_margin_min_pct,
    cast(coalesce(cast({{ json_text('decisions.value', "'gpu_memory_utilization'") }} as double), 0.90) as double)
        as gpu_memory_utilization,
    cast(coalesce(cast({{ json_text('decisions.value', "'activation_workspace_gb_per_gpu'") }} as double), 2) as double)
        as activation_workspace_gb_per_gpu,
    cast(coalesce(cast({{ json_text('decisions.value', "'quality_acceptance_min'") }} as double), 0.9) as double)
        as quality_acceptance_min,
    cast(coalesce(cast({{ json_text('decisions.value', "'spot_interruption_overhead'") }} as double), 0.10) as double)
        as spot_interruption_overhead,
    cast(coalesce(cast({{ json_text('decisions.value', "'cost_of_capital_annual'") }} as double), 0.08) as double)
        as cost_of_capital_annual,
    cast(coalesce(cast({{ json_text('decisions.value', "'host_network_capex_share'") }} as double), 0.25) as double)
        as host_network_capex_share,
    cast(coalesce((select cast({{ json_scalar_text('value') }} as double) from policies
                   where policy = 'serving_target_utilisation'), 0.6) as double) as serving_target_utilisation,
    cast({{ json_text('factors.value', "'spot'") }} as double) as spot_factor,
    cast({{ json_text('factors.value', "'reserved-1y'") }} as double) as reserved_1y_factor,
    cast({{ json_text('factors.value', "'reserved-3y'") }} as double) as reserved_3y_factor,
    730.0 as hours_per_month
from (select 1 as one) as anchor
left join decisions on true
left join factors on true
