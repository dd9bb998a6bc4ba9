-- Catches: a FOCUS export (fct_focus_export) whose split rows do not partition the ledger. Per billing
-- period and currency, to the cent: Σ BilledCost and Σ EffectiveCost of the export = ledger_focus;
-- and per ledger line exactly (every line has its parts, the parts add up to it).
-- Blocking: a mismatch withholds the publication.
{{ config(meta={'dagster': {'ref': {'name': 'fct_focus_export'}}}) }}

with ledger as (
    select cast(BillingPeriodStart as date) as billing_period_start, BillingCurrency as currency,
           sum(BilledCost) as billed, sum(EffectiveCost) as effective
    from {{ ref('ledger_focus') }}
    group by cast(BillingPeriodStart as date), BillingCurrency
),

export as (
    select cast(BillingPeriodStart as date) as billing_period_start, BillingCurrency as currency,
           sum(BilledCost) as billed, sum(EffectiveCost) as effective
    from {{ ref('fct_focus_export') }}
    group by cast(BillingPeriodStart as date), BillingCurrency
),

periods as (
    select
        coalesce(ledger.billing_period_start, export.billing_period_start) as billing_period_start,
        coalesce(ledger.currency, export.currency) as currency,
        'period' as level,
        coalesce(ledger.billed, 0) as ledger_billed, coalesce(export.billed, 0) as export_billed,
        coalesce(ledger.effective, 0) as ledger_effective, coalesce(export.effective, 0) as export_effective
    from ledger
    full outer join export
        on export.billing_period_start = ledger.billing_period_start and export.currency = ledger.currency
),

lines as (
    select cast(ledger.BillingPeriodStart as date), ledger.BillingCurrency, 'line',
           coalesce(ledger.BilledCost, 0), coalesce(sum(export.BilledCost), 0),
           coalesce(ledger.EffectiveCost, 0), coalesce(sum(export.EffectiveCost), 0)
    from {{ ref('ledger_focus') }} as ledger
    left join {{ ref('fct_focus_export') }} as export on export.x_charge_key = ledger.x_charge_key
    group by ledger.x_charge_key, cast(ledger.BillingPeriodStart as date), ledger.BillingCurrency,
             ledger.BilledCost, ledger.EffectiveCost
    having count(export.x_charge_key) = 0
        or coalesce(ledger.BilledCost, 0) <> coalesce(sum(export.BilledCost), 0)
        or coalesce(ledger.EffectiveCost, 0) <> coalesce(sum(export.EffectiveCost), 0)
)

select * from periods
where round(ledger_billed, 2) <> round(export_billed, 2) or round(ledger_effective, 2) <> round(export_effective, 2)
union all
select * from lines
