-- Team tag values that name no registered team: with a team registry, a bill line
-- tagged `team: reserch` is not charged to a made-up team; it falls to the next allocation rule
-- (sub-account mapping, workload owner) or '(unallocated)'. This lists each such value with where its
-- cost went and how much, per billing period and currency, so a typo or a missing alias is fixed at
-- the source instead of vanishing. Empty without a team registry (then tag values are the teams,
-- dim_team.registered = false).
with tags as (
    select * from {{ ref('int_billing_charge_tags') }}
    where dimension = 'team' and tag_value <> ''
),

teams as (
    select * from {{ ref('stg_registry__teams') }}
),

team_names as (
    select lower(team_id) as match_value from teams
    union
    select lower(trim(a.alias)) from teams, {{ lateral_explode(json_string_list('teams.aliases')) }} as a(alias)
    union
    select lower(trim(cost_center)) from teams where cost_center is not null
    union
    select match_value from {{ ref('stg_registry__mappings') }} where kind = 'tag_value' and team_id is not null
),

unmatched as (
    select tags.charge_key, tags.tag_key, tags.tag_value
    from tags
    where (select count(*) from teams) > 0
        and lower(tags.tag_value) not in (select match_value from team_names where match_value is not null)
),

ledger as (
    select x_charge_key, cast(BillingPeriodStart as date) as billing_period_start, BillingCurrency,
           x_team, x_allocation_basis, BilledCost, EffectiveCost
    from {{ ref('ledger_focus') }}
),

final as (
    select
        unmatched.tag_key,
        unmatched.tag_value,
        ledger.billing_period_start,
        ledger.BillingCurrency as currency,
        ledger.x_team as charged_to,
        ledger.x_allocation_basis as charged_by,
        count(*) as lines,
        sum(ledger.BilledCost) as billed_cost,
        sum(ledger.EffectiveCost) as effective_cost
    from unmatched
    inner join ledger on ledger.x_charge_key = unmatched.charge_key
    group by unmatched.tag_key, unmatched.tag_value, ledger.billing_period_start, ledger.BillingCurrency,
             ledger.x_team, ledger.x_allocation_basis
)

select * from final
