-- Tag keys that look like they name an owner (team, owner, cost centre, business unit, project,
-- workload, app; reference/tags.py OWNERSHIP_KEY_PATTERN) but match no key any allocation
-- dimension reads (policies.tag_keys or the built-in list), with the cost of the lines carrying them
-- and where that cost went, per billing period and currency. Such a key is almost always a spelling or a
-- key the registry does not know yet: left unlisted, its lines lose their team without a word (a
-- multi-cloud bill tagged `CostCenter` on AWS and `cost-center` on GCP once lost half its cost this
-- way). Warn test assert_no_unmatched_ownership_tag_keys makes it loud. A line carrying two such keys
-- is counted under each.
-- depends_on: {{ ref('stg_registry__policies') }}
with charges as (
    select charge_key, Tags from {{ ref('int_billing_charges_current') }}
    where Tags is not null
),

configured as (
    select distinct tag_key from {{ configured_tag_keys() }} as keys
),

charge_tag_keys as (
    select charges.charge_key, {{ json_keys_exploded('charges.Tags') }} as raw_key
    from charges
),

candidates as (
    select charge_key, trim(raw_key) as tag_key_as_written, {{ tag_key_norm('raw_key') }} as tag_key
    from charge_tag_keys
),

unmatched as (
    select distinct charge_key, tag_key_as_written, tag_key
    from candidates
    where tag_key not in (select tag_key from configured)
        and {{ regex_search('tag_key', ownership_key_pattern()) }}
),

ledger as (
    select x_charge_key, cast(BillingPeriodStart as date) as billing_period_start, BillingCurrency,
           x_team, x_allocation_basis, BilledCost, EffectiveCost
    from {{ ref('ledger_focus') }}
),

final as (
    select
        unmatched.tag_key_as_written,
        unmatched.tag_key,
        ledger.billing_period_start,
        ledger.BillingCurrency as currency,
        ledger.x_team as charged_to,
        ledger.x_allocation_basis as charged_by,
        count(*) as lines,
        sum(ledger.BilledCost) as billed_cost,
        sum(ledger.EffectiveCost) as effective_cost
    from unmatched
    inner join ledger on ledger.x_charge_key = unmatched.charge_key
    group by unmatched.tag_key_as_written, unmatched.tag_key, ledger.billing_period_start,
             ledger.BillingCurrency, ledger.x_team, ledger.x_allocation_basis
)

select * from final
