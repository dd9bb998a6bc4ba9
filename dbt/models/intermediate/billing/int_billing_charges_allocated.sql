-- Allocation keys for every current charge: team, workload and environment from tags, then
-- sub-account mappings. What resolves to nothing is '(unallocated)', never dropped.
-- The provider's own allocation goes first: a FOCUS 1.3 line the provider already allocated (split
-- cost allocation: AllocatedMethodId, AllocatedTags, kept in x_extra) is charged to the team its
-- AllocatedTags name (team keys, else the owner of the workload they name), before the billed
-- resource's Tags and any rule of ours; x_allocation_basis then reads 'provider allocation: <method>'
-- (e.g. 'provider allocation: split-proportional'). AllocatedTags naming no team fall through to the
-- rules below.
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
    -- per tag set: 'provider_allocation' (AllocatedTags) and 'resource' (Tags)
    select charge_tags.charge_key, charge_tags.tag_source,
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
    select charge_tags.charge_key, charge_tags.tag_source, min_by(workloads.workload_id, charge_tags.key_rank) as workload_id
    from charge_tags
    inner join workloads on lower(workloads.workload_id) = lower(charge_tags.tag_value)
    where charge_tags.dimension = 'workload'
    group by all
),

environment_from_tags as (
    select charge_tags.charge_key, min_by(lower(charge_tags.tag_value), charge_tags.key_rank) as environment
    from charge_tags
    where charge_tags.dimension = 'environment' and charge_tags.tag_source = 'resource'
    group by all
),

subaccount_teams as (
    select match_value, any_value(team_id) as team_id
    from mappings where kind = 'subaccount' and team_id is not null
    group by all
),

provider_team as (
    -- The provider's allocation: AllocatedTags' team, else the owner of AllocatedTags' workload.
    select charges.charge_key,
           coalesce(alloc_team.team_id, alloc_workload_owner.team_id) as team_id,
           alloc_team.team_id is not null and alloc_team.unregistered as unregistered,
           nullif(trim({{ json_text('charges.x_extra', "'AllocatedMethodId'") }}), '') as method_id
    from charges
    left join team_from_tags as alloc_team
        on alloc_team.charge_key = charges.charge_key and alloc_team.tag_source = 'provider_allocation'
    left join workload_from_tags as alloc_workload
        on alloc_workload.charge_key = charges.charge_key and alloc_workload.tag_source = 'provider_allocation'
    left join workloads as alloc_workload_owner on alloc_workload_owner.workload_id = alloc_workload.workload_id
    where alloc_team.team_id is not null or alloc_workload_owner.team_id is not null
),

final as (
    select
        charges.*,
        coalesce(
            provider_team.team_id,
            team_from_tags.team_id,
            subaccount_teams.team_id,
            workloads.team_id,
            '(unallocated)'
        ) as x_team,
        coalesce(alloc_workload.workload_id, workload_from_tags.workload_id) as x_workload_id,
        environment_from_tags.environment as x_environment,
        case
            when provider_team.team_id is not null
                then concat('provider allocation: ', coalesce(provider_team.method_id, 'unnamed method'),
                            case when provider_team.unregistered then ' (unregistered team)' else '' end)
            when team_from_tags.team_id is not null and team_from_tags.unregistered then 'tag (unregistered)'
            when team_from_tags.team_id is not null then 'tag'
            when subaccount_teams.team_id is not null then 'subaccount'
            when workloads.team_id is not null then 'workload owner'
            else 'none'
        end as x_allocation_basis
    from charges
    left join provider_team on provider_team.charge_key = charges.charge_key
    left join team_from_tags
        on team_from_tags.charge_key = charges.charge_key and team_from_tags.tag_source = 'resource'
    left join workload_from_tags
        on workload_from_tags.charge_key = charges.charge_key and workload_from_tags.tag_source = 'resource'
    left join workload_from_tags as alloc_workload
        on alloc_workload.charge_key = charges.charge_key and alloc_workload.tag_source = 'provider_allocation'
    left join environment_from_tags on environment_from_tags.charge_key = charges.charge_key
    left join subaccount_teams
        on subaccount_teams.match_value in (lower(trim(charges.SubAccountName)), lower(trim(charges.SubAccountId)))
    left join workloads on workloads.workload_id = workload_from_tags.workload_id
)

select * from final
