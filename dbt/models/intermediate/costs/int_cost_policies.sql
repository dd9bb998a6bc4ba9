-- The registry's cost policies as one typed row (docs/cost_model.md). Absent policies take the
-- documented defaults so a registry without them still prices.
with policies as (
    select policy, value from {{ ref('stg_registry__policies') }}
),

final as (
    select
        coalesce((select cast({{ json_text('value', "'amount'") }} as decimal(38, 12)) from policies where policy = 'platform_labor_monthly'), 0)
            as platform_labor_monthly,
        coalesce((select upper({{ json_text('value', "'currency'") }}) from policies where policy = 'platform_labor_monthly'), 'USD')
            as platform_labor_currency,
        coalesce((select cast({{ json_text('value', "'amount'") }} as decimal(38, 12)) from policies where policy = 'operator_hourly_rate'), 0)
            as operator_hourly_rate,
        coalesce((select upper({{ json_text('value', "'currency'") }}) from policies where policy = 'operator_hourly_rate'), 'USD')
            as operator_hourly_rate_currency,
        coalesce((select cast({{ json_text('value', "'amount'") }} as decimal(38, 12)) from policies where policy = 'moderation_cost_per_asset'), 0)
            as moderation_cost_per_asset,
        coalesce((select upper({{ json_text('value', "'currency'") }}) from policies where policy = 'moderation_cost_per_asset'), 'USD')
            as moderation_cost_currency,
        -- Which idle is priced as idle_capacity on GPU bill lines (int_gpu_idle_by_workload): 'unallocated'
        -- (the default: billed GPU-hours nothing held) or 'unallocated_and_underused' (also allocated x (1 - activity)).
        coalesce((select lower({{ json_scalar_text('value') }}) from policies where policy = 'idle_capacity_basis'), 'unallocated')
            as idle_capacity_basis,
        coalesce((select cast({{ json_scalar_text('value') }} as double) from policies where policy = 'observability_share'), 0)
            as observability_share,
        coalesce((select {{ json_scalar_text('value') }} from policies where policy = 'default_provider'), 'aws') as default_provider,
        coalesce((select {{ json_scalar_text('value') }} from policies where policy = 'idle_policy'), 'separate') as idle_policy,
        -- Chargeback basis: 'amortised' (EffectiveCost, the default) or 'billed' (BilledCost).
        coalesce((select lower({{ json_scalar_text('value') }}) from policies where policy = 'chargeback_basis'), 'amortised')
            as chargeback_basis,
        -- Unused commitment: 'unallocated' (its own line on the '(unallocated)' row, the default) or 'spread'.
        coalesce((select lower({{ json_scalar_text('value') }}) from policies where policy = 'unused_commitment_policy'), 'unallocated')
            as unused_commitment_policy,
        -- Shared cost (and unused commitment under 'spread'): 'direct_cost' (each team's direct cost share,
        -- the default) or 'used_gpu_hours' (the month's used GPU-hours per team; a month without GPU
        -- usage falls back to direct cost, said by the split's method).
        coalesce((select lower({{ json_scalar_text('value') }}) from policies where policy = 'shared_cost_split'), 'direct_cost')
            as shared_cost_split,
        -- Untagged credits and tax (bill lines of ChargeCategory Credit / Tax with no team): 'proportional'
        -- (the default: spread over the period's teams in proportion to their chargeback before credits and
        -- tax, in that basis and currency) or 'unallocated' (kept on the '(unallocated)' row).
        coalesce((select lower({{ json_scalar_text('value') }}) from policies where policy = 'credits_tax_split'), 'proportional')
            as credits_tax_split,
        -- A MIG slice or shared GPU as a fraction of its physical GPU: 'compute' (compute slices of 7, HAMi
        -- gpucores; the default) or 'memory' (memory slices of 8, HAMi gpumem-percentage).
        coalesce((select lower({{ json_scalar_text('value') }}) from policies where policy = 'mig_fraction_rule'), 'compute')
            as mig_fraction_rule,
        coalesce((select value from policies where policy = 'reference_regions'), '{}') as reference_regions,
        coalesce((select value from policies where policy = 'pricing_category_factors'), '{}') as pricing_category_factors
)

select * from final
