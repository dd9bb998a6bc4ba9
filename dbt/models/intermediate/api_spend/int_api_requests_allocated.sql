-- One row per LLM API request with its owning team and workload. The proxy's team_id is matched
-- (case-insensitive) to a registry team id, else a team alias, else a registry mapping of kind
-- 'api_team'; anything else is '(unallocated)'. The workload tag counts when the registry knows it,
-- else the workload of the api_team mapping, else '(unallocated)'.
with requests as (
    select * from {{ ref('stg_api_spend__requests') }}
),

teams as (
    select team_id, lower(team_id) as match_value from {{ ref('stg_registry__teams') }}
),

team_aliases as (
    select teams.team_id, lower(trim(a.alias)) as match_value
    from {{ ref('stg_registry__teams') }} as teams,
        {{ lateral_explode(json_string_list('teams.aliases')) }} as a(alias)
),

api_mappings as (
    select match_value, any_value(team_id) as team_id, any_value(workload_id) as workload_id
    from {{ ref('stg_registry__mappings') }}
    where kind = 'api_team'
    group by match_value
),

workloads as (
    select workload_id from {{ ref('stg_registry__workloads') }}
),

alias_lookup as (
    select match_value, any_value(team_id) as team_id
    from team_aliases
    group by match_value
    having count(distinct team_id) = 1
),

final as (
    select
        requests.*,
        coalesce(teams.team_id, alias_lookup.team_id, api_mappings.team_id, '(unallocated)') as team_id,
        coalesce(workloads.workload_id, api_mappings.workload_id, '(unallocated)') as workload_id,
        requests.status = 'failure' as failed,
        requests.retries > 0 as retried
    from requests
    left join teams on lower(trim(requests.team_tag)) = teams.match_value
    left join alias_lookup on lower(trim(requests.team_tag)) = alias_lookup.match_value
    left join api_mappings on lower(trim(requests.team_tag)) = api_mappings.match_value
    left join workloads on requests.workload_tag = workloads.workload_id
)

select * from final
