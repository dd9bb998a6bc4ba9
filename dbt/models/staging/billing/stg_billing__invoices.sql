-- Invoice totals; a re-delivered invoice file replaces the earlier total for the same invoice key.
with source as (
    select * from {{ source('billing', 'billing_invoices') }}
),

final as (
    select
        InvoiceId,
        BillingAccountId,
        BillingPeriodStart,
        upper(trim(BillingCurrency)) as BillingCurrency,
        InvoiceTotal,
        _source_file as x_source_file,
        _source_line as x_source_line
    from source
    qualify row_number() over (
        partition by BillingAccountId, BillingPeriodStart, upper(trim(BillingCurrency))
        order by _loaded_at desc, _source_line desc
    ) = 1
)

select * from final
