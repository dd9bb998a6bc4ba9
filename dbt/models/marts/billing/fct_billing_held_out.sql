-- Bill lines held out of the ledger because no currency is known: the export names none
-- (no BillingCurrency column, or an empty value) and the registry's
-- policies.default_currency_by_account names none for the line's billing account (nor a default).
-- Money without a currency is never added to real money, and never silently dropped: each file,
-- account and period is listed here with its lines and amounts (in the unknown currency) and the fix.
with lines as (
    select * from {{ ref('stg_focus__charges') }}
),

currency_policy as (
    select max(value) as by_account from {{ ref('stg_registry__policies') }}
    where policy = 'default_currency_by_account'
),

held as (
    select lines.*
    from lines
    cross join currency_policy
    where lines.BillingCurrency is null
        and {{ json_text('currency_policy.by_account', 'lines.BillingAccountId') }} is null
        and {{ json_text('currency_policy.by_account', "'default'") }} is null
),

final as (
    select
        x_source_file as source_file,
        x_file_hash as file_hash,
        BillingAccountId as billing_account_id,
        cast(BillingPeriodStart as date) as billing_period_start,
        count(*) as lines_held_out,
        min(x_source_line) as first_line,
        max(x_source_line) as last_line,
        sum(BilledCost) as billed_cost_unknown_currency,
        sum(EffectiveCost) as effective_cost_unknown_currency,
        'no BillingCurrency in the export and no policies.default_currency_by_account for account '
            || coalesce(BillingAccountId, '(none)') || ' and no default' as reason
    from held
    group by x_source_file, x_file_hash, BillingAccountId, cast(BillingPeriodStart as date)
)

select * from final
