-- Teams with their budgets, as published for chargeback and reports. `registered` = false for a team
-- that exists only as a bill tag value: with no team registry at all (a bare FOCUS export), tag values
-- are the teams (int_billing_charges_allocated, 'tag (unregistered)'), and they are listed here
-- too, without budget, so every chargeback team has a row.
with registered as (
    select {{ star_except(['_file_hash', '_source_file', '_source_line']) }}, true as registered
    from {{ ref('stg_registry__teams') }}
),

tag_teams as (
    select distinct x_team as team_id
    from {{ ref('int_billing_charges_allocated') }}
    where x_allocation_basis = 'tag (unregistered)'
        and x_team not in (select team_id from registered)
),

final as (
    select team_id, name, cost_center, owner, budget_monthly, budget_currency, aliases, registered
    from registered
    union all
    select team_id, team_id as name, cast(null as string) as cost_center, cast(null as string) as owner,
           cast(null as decimal(38, 12)) as budget_monthly, cast(null as string) as budget_currency,
           cast(null as string) as aliases, false as registered
    from tag_teams
)

select * from final
