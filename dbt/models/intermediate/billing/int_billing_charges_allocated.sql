-- Allocation keys for every current charge: team, workload and environment from tags, then
-- sub-account mappings. What resolves to nothing is '(unallocated)', never dropped.
-- Tag keys per dimension: the registry's policies.tag_keys.<dimension> when given, else the built-in
-- defaults (warehouse/reference.py DEFAULT_TAG_KEYS, macro default_tag_keys); keys compared by
-- tag_key_norm (trimmed, lower case, '-' and ' ' as '_'). Team values match team ids, aliases,
-- cost centres and tag_value mappings; with NO team registry at all, the tag value itself
-- (trimmed, lower-cased) is the team (x_allocation_basis 'tag (unregistered)'), so a bare FOCUS
-- export still allocates (docs/registry.md "Tag-key defaults").
with charges as (
    select * from {{ ref('int_billing_charges_current') }}
),

policies as (
    select * from {{ ref('stg_registry__policies') }} where policy = 'tag_keys'
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

key_lists as (
    select 'team' as dimension, {{ json_string_list(json_member('value', "'team'")) }} as keys from policies
    union all
    select 'workload', {{ json_string_list(json_member('value', "'workload'")) }} from policies
    union all
    select 'environment', {{ json_string_list(json_member('value', "'environment'")) }} from policies
),

key_positions as (
    select dimension, {{ explode_with_position('keys', 'key_name', 'key_rank') }}
    from key_lists
),

registry_keys as (
    select dimension, {{ tag_key_norm('key_name') }} as tag_key, key_rank
    from key_positions
),

key_rank as (
    select dimension, tag_key, key_rank from registry_keys
    union all
    select dimension, tag_key, key_rank from {{ default_tag_keys() }}
    where dimension not in (select dimension from registry_keys)
),

registry_state as (
    select count(*) > 0 as has_teams from teams
),

charge_tag_keys as (
    select charges.charge_key, charges.Tags, {{ json_keys_exploded('charges.Tags') }} as raw_key
    from charges
    where charges.Tags is not null
),

charge_tags as (
    select charge_key, {{ tag_key_norm('raw_key') }} as tag_key, trim({{ json_text('Tags', 'raw_key') }}) as tag_value
    from charge_tag_keys
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
           min_by(coalesce(team_names.team_id, lower(charge_tags.tag_value)), key_rank.key_rank) as team_id,
           max(case when team_names.team_id is null then 1 else 0 end) = 1 as unregistered
    from charge_tags
    cross join registry_state
    inner join key_rank on key_rank.dimension = 'team' and key_rank.tag_key = charge_tags.tag_key
    left join team_names on team_names.match_value = lower(charge_tags.tag_value)
    where charge_tags.tag_value <> ''
      and (team_names.team_id is not null or not registry_state.has_teams)
    group by all
),

workload_from_tags as (
    select charge_tags.charge_key, min_by(workloads.workload_id, key_rank.key_rank) as workload_id
    from charge_tags
    inner join key_rank on key_rank.dimension = 'workload' and key_rank.tag_key = charge_tags.tag_key
    inner join workloads on lower(workloads.workload_id) = lower(charge_tags.tag_value)
    group by all
),

environment_from_tags as (
    select charge_tags.charge_key, min_by(lower(charge_tags.tag_value), key_rank.key_rank) as environment
    from charge_tags
    inner join key_rank on key_rank.dimension = 'environment' and key_rank.tag_key = charge_tags.tag_key
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
