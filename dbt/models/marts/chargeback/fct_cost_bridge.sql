-- The bridge between the three figures, per month and currency, in ordered steps with a running
-- total: Invoice (cloud BilledCost) -> + amortisation adjustments (EffectiveCost - BilledCost)
-- -> + API spend -> = Chargeback -> + run-priced work not on a bill -> + owned hardware (work and
-- capacity nobody held, at the sites' rates) -> + estimates -> + platform labour -> + idle not on a
-- bill -> = All-in showback. When the registry charges on the billed
-- basis (chargeback_basis: billed) the amortisation step comes after Chargeback, since the
-- showback is always amortised. Subtotal and total rows carry their running total as amount.
with policies as (
    select * from {{ ref('int_cost_policies') }}
),

invoice as (
    select cast(BillingPeriodStart as date) as period, BillingCurrency as currency,
           sum(BilledCost) as billed, sum(coalesce(EffectiveCost, BilledCost)) as amortised
    from {{ ref('ledger_focus') }}
    group by all
),

api as (
    select cast(date_trunc('month', day) as date) as period, currency, sum(cost) as api_spend
    from {{ ref('fct_api_spend_daily') }}
    group by all
),

showback as (
    select period, currency, bridge_step, sum(amount) as amount
    from {{ ref('fct_showback_monthly') }}
    where source <> 'chargeback'
    group by all
),

months as (
    select period, currency from invoice
    union
    select period, currency from api
    union
    select period, currency from showback
),

steps as (
    select * from (values
        (1, 1, 'Invoice', 'start'),
        (2, 4, 'Amortisation adjustments', 'add'),
        (3, 2, 'API spend', 'add'),
        (4, 3, 'Chargeback', 'subtotal'),
        (5, 5, 'Run-priced work not on a bill', 'add'),
        (6, 6, 'Owned hardware', 'add'),
        (7, 7, 'Estimates', 'add'),
        (8, 8, 'Platform labour', 'add'),
        (9, 9, 'Idle not on a bill', 'add'),
        (10, 10, 'All-in showback', 'total')
    ) as steps(order_amortised, order_billed, step, step_kind)
),

step_amounts as (
    select
        months.period,
        months.currency,
        case when policies.chargeback_basis = 'billed' then steps.order_billed else steps.order_amortised end
            as step_order,
        steps.step,
        steps.step_kind,
        case steps.step
            when 'Invoice' then coalesce(invoice.billed, 0)
            when 'Amortisation adjustments' then coalesce(invoice.amortised - invoice.billed, 0)
            when 'API spend' then coalesce(api.api_spend, 0)
            when 'Chargeback' then 0
            when 'All-in showback' then 0
            else coalesce(showback.amount, 0)
        end as step_delta
    from months
    cross join steps
    cross join policies
    left join invoice on invoice.period = months.period and invoice.currency = months.currency
    left join api on api.period = months.period and api.currency = months.currency
    left join showback
        on showback.period = months.period and showback.currency = months.currency and showback.bridge_step = steps.step
),

running as (
    select
        *,
        {{ money('step_delta') }} as delta,
        {{ money('sum(step_delta) over (partition by period, currency order by step_order
                                   rows between unbounded preceding and current row)') }} as running_total
    from step_amounts
),

final as (
    select
        period,
        currency,
        step_order,
        step,
        step_kind,
        case when step_kind in ('subtotal', 'total') then running_total else delta end as amount,
        running_total
    from running
)

select * from final
