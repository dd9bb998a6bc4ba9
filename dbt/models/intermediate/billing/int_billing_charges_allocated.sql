-- Allocation keys for every current charge: team, workload and environment from tags, then
-- sub-account mappings. What resolves to nothing is '(unallocated)', never dropped.
-- Tag keys per dimension and their precedence: int_billing_charge_tags. Team values match team ids, aliases,
-- cost centres and tag_value mappings; with NO team registry at all, the tag value itself
-- (trimmed, lower-cased) is the team (x_allocation_basis 'tag (unregistered)'), so a bare FOCUS
-- export still allocates (docs/registry.md "Tag-key defaults").
with charges as (
    select * from {{ ref('int_billing_charges_current') }}
),

charge_tags as (
    -- Every tag of a current charge under an allocation key, with its dimension and precedence.
    select * from {{ ref('int_billing_charge_tags') }}
),

teams as (
    select * from {{ ref('stg_registry__teams') }}
),

workloads as (
    select * from {{ ref('stg_registry__workloads') }}
),

mappings as (
    select * from {{ ref('stg_registry__mappings') }}
),

registry_state as (
    select count(*) > 0 as has_teams from teams
),

team_names as (
    select lower(team_id) as match_value, team_id from teams
    union
    select lower(trim(a.alias)), team_id from teams, {{ lateral_explode(json_string_list('teams.aliases')) }} as a(alias)
    union
    select lower(trim(cost_center)), team_id from teams where cost_center is not null
    union
    select match_value, team_id from mappings where kind = 'tag_value' and team_id is not null
),

team_from_tags as (
    select charge_tags.charge_key,
           min_by(coalesce(team_names.team_id, lower(charge_tags.tag_value)), charge_tags.key_rank) as team_id,
           max(case when team_names.team_id is null then 1 else 0 end) = 1 as unregistered
    from charge_tags
    cross join registry_state
    left join team_names on team_names.match_value = lower(charge_tags.tag_value)
    where charge_tags.dimension = 'team' and charge_tags.tag_value <> ''
      and (team_names.team_id is not null or not registry_state.has_teams)
    group by all
),

workload_from_tags as (
    select charge_tags.charge_key, min_by(workloads.workload_id, charge_tags.key_rank) as workload_id
    from charge_tags
    inner join workloads on lower(workloads.workload_id) = lower(charge_tags.tag_value)
    where charge_tags.dimension = 'workload'
    group by all
),

environment_from_tags as (
    select charge_tags.charge_key, min_by(lower(charge_tags.tag_value), charge_tags.key_rank) as environment
    from charge_tags
    where charge_tags.dimension = 'environment'
    group by all
),

subaccount_teams as (
    select match_value, any_value(team_id) as team_id
    from mappings where kind = 'subaccount' and team_id is not null
    group by all
),

final as (
    select
        charges.*,
        coalesce(
            team_from_tags.team_id,
            subaccount_teams.team_id,
            workloads.team_id,
            '(unallocated)'
        ) as x_team,
        workload_from_tags.workload_id as x_workload_id,
        environment_from_tags.environment as x_environment,
        case
            when team_from_tags.team_id is not null and team_from_tags.unregistered then 'tag (unregistered)'
            when team_from_tags.team_id is not null then 'tag'
            when subaccount_teams.team_id is not null then 'subaccount'
            when workloads.team_id is not null then 'workload owner'
            else 'none'
        end as x_allocation_basis
    from charges
    left join team_from_tags on team_from_tags.charge_key = charges.charge_key
    left join workload_from_tags on workload_from_tags.charge_key = charges.charge_key
    left join environment_from_tags on environment_from_tags.charge_key = charges.charge_key
    left join subaccount_teams
        on subaccount_teams.match_value in (lower(trim(charges.SubAccountName)), lower(trim(charges.SubAccountId)))
    left join workloads on workloads.workload_id = workload_from_tags.workload_id
)

select * from final
