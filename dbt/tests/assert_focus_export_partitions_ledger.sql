-- Catches: a FOCUS export (fct_focus_export) whose split rows do not partition the ledger. Per billing
-- period and currency, to the cent: Σ BilledCost and Σ EffectiveCost of the export = ledger_focus;
-- and per ledger line exactly (every line has its parts, the parts add up to it).
-- Blocking: a mismatch withholds the publication.
-- Reads the billing periods of the UTC days built since it last passed (macro days_built_since_last_pass;
-- every period on a full refresh or without a passing record): the days int_focus_export_rows rewrote
-- (x_built_at; fct_focus_export copied exactly those) and the days of ledger lines from files loaded
-- since. A new, late or restated bill or a moved split rewrites its days, so every line and every export
-- row that changed is in such a period, and each such period is summed whole. A night reads its month.
{{ config(meta={'dagster': {'ref': {'name': 'fct_focus_export'}}}) }}
{%- set scope = days_built_since_last_pass([(ref('int_focus_export_rows'), 'x_charge_day', 'x_built_at')],
                                           [(ref('ledger_focus'), 'ChargePeriodStart', 'x_file_hash')]) %}
{%- if scope['all'] %}
    {%- set periods = scope %}
{%- else %}
    {%- set periods_sql %}
        select distinct cast(cast(BillingPeriodStart as date) as string)
        from {{ ref('ledger_focus') }} where {{ in_plan('ChargePeriodStart', scope) }}
        union
        select distinct cast(cast(BillingPeriodStart as date) as string)
        from {{ ref('fct_focus_export') }} where {{ in_plan('ChargePeriodStart', scope) }}
    {%- endset %}
    {#- the months of those periods' starts, as ranges of BillingPeriodStart (a scan of their rows only) #}
    {%- set periods = whole_months({'all': false, 'days': run_query(periods_sql).columns[0].values() | reject('none') | list}) %}
{%- endif %}

with ledger_lines as (
    select * from {{ ref('ledger_focus') }} where {{ in_plan('BillingPeriodStart', periods) }}
),

export_rows as (
    select * from {{ ref('fct_focus_export') }} where {{ in_plan('BillingPeriodStart', periods) }}
),

ledger as (
    select cast(BillingPeriodStart as date) as billing_period_start, BillingCurrency as currency,
           sum(BilledCost) as billed, sum(EffectiveCost) as effective
    from ledger_lines
    group by cast(BillingPeriodStart as date), BillingCurrency
),

export as (
    select cast(BillingPeriodStart as date) as billing_period_start, BillingCurrency as currency,
           sum(BilledCost) as billed, sum(EffectiveCost) as effective
    from export_rows
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
    from ledger_lines as ledger
    left join export_rows as export on export.x_charge_key = ledger.x_charge_key
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
