-- The cost of one GPU-hour on owned hardware, per owned site x GPU model (policy owned_hardware,
-- docs/registry.md; a site entry overrides any field of the policy):
--   rate = capex_per_gpu / (amortisation_months x 730 h)            (capex spread over the asset's life)
--        + power_kw_per_gpu x pue x electricity_per_kwh              (power, cooling overhead included)
--        + ops_per_gpu_hour (else ops_per_gpu_month / 730)           (operations: staff, space, support)
-- power_kw_per_gpu defaults to the catalog TDP (dim_gpu.tdp_w / 1000), pue to 1.0, currency to USD.
-- A missing capex, amortisation, electricity price or operations cost leaves the rate null and
-- names what is missing (missing_inputs): the usage is then listed as unpriced, never as $0.
-- The rate prices every hour of the asset's life; hours nobody used are idle capacity
-- (fct_gpu_idle_daily), not spread over the hours that were used.
with owned as (
    select value as owned_policy from {{ ref('stg_registry__policies') }} where policy = 'owned_hardware'
),

sites as (
    select site, max(site_policy) as site_policy
    from {{ ref('int_gpu_sites') }}
    where is_owned
    group by site
),

gpus as (
    select gpu_model, tdp_w from {{ ref('dim_gpu') }}
),

inputs as (
    select
        sites.site,
        gpus.gpu_model,
        upper(coalesce({{ json_text('sites.site_policy', "'currency'") }}, {{ json_text('owned.owned_policy', "'currency'") }}, 'USD'))
            as currency,
        cast(coalesce({{ json_text(json_member('sites.site_policy', "'capex_per_gpu'"), 'gpus.gpu_model') }},
                      {{ json_text(json_member('owned.owned_policy', "'capex_per_gpu'"), 'gpus.gpu_model') }}) as decimal(38, 12))
            as capex_per_gpu,
        cast(coalesce({{ json_text('sites.site_policy', "'amortisation_months'") }},
                      {{ json_text('owned.owned_policy', "'amortisation_months'") }}) as decimal(38, 12))
            as amortisation_months,
        cast(coalesce({{ json_text(json_member('sites.site_policy', "'power_kw_per_gpu'"), 'gpus.gpu_model') }},
                      {{ json_text(json_member('owned.owned_policy', "'power_kw_per_gpu'"), 'gpus.gpu_model') }},
                      cast(gpus.tdp_w / 1000.0 as string)) as decimal(38, 12))
            as power_kw_per_gpu,
        cast(coalesce({{ json_text('sites.site_policy', "'pue'") }}, {{ json_text('owned.owned_policy', "'pue'") }}, '1.0')
             as decimal(38, 12)) as pue,
        cast(coalesce({{ json_text('sites.site_policy', "'electricity_per_kwh'") }},
                      {{ json_text('owned.owned_policy', "'electricity_per_kwh'") }}) as decimal(38, 12))
            as electricity_per_kwh,
        cast(coalesce({{ json_text('sites.site_policy', "'ops_per_gpu_hour'") }},
                      {{ json_text('owned.owned_policy', "'ops_per_gpu_hour'") }}) as decimal(38, 12))
            as ops_per_gpu_hour_stated,
        cast(coalesce({{ json_text('sites.site_policy', "'ops_per_gpu_month'") }},
                      {{ json_text('owned.owned_policy', "'ops_per_gpu_month'") }}) as decimal(38, 12))
            as ops_per_gpu_month
    from sites
    cross join owned
    cross join gpus
),

components as (
    select
        *,
        {{ money('capex_per_gpu / (nullif(amortisation_months, 0) * 730)') }} as capex_per_gpu_hour,
        {{ money('power_kw_per_gpu * pue * electricity_per_kwh') }} as power_per_gpu_hour,
        {{ money('coalesce(ops_per_gpu_hour_stated, ops_per_gpu_month / 730)') }} as ops_per_gpu_hour,
        concat_ws(', ',
            case when capex_per_gpu is null then 'capex_per_gpu' end,
            case when coalesce(amortisation_months, 0) <= 0 then 'amortisation_months' end,
            case when power_kw_per_gpu is null then 'power_kw_per_gpu (no TDP in the GPU catalog)' end,
            case when electricity_per_kwh is null then 'electricity_per_kwh' end,
            case when ops_per_gpu_hour_stated is null and ops_per_gpu_month is null then 'ops_per_gpu_hour or ops_per_gpu_month' end
        ) as missing_inputs
    from inputs
),

final as (
    select
        site,
        gpu_model,
        currency,
        capex_per_gpu,
        amortisation_months,
        power_kw_per_gpu,
        pue,
        electricity_per_kwh,
        capex_per_gpu_hour,
        power_per_gpu_hour,
        ops_per_gpu_hour,
        case when missing_inputs = ''
             then {{ money('capex_per_gpu_hour + power_per_gpu_hour + ops_per_gpu_hour') }} end as rate_per_gpu_hour,
        nullif(missing_inputs, '') as missing_inputs
    from components
)

select * from final
