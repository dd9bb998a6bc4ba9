{{ config(
    materialized='incremental',
    incremental_strategy=gpu_ledger.day_incremental_strategy(),
    partition_by=gpu_ledger.day_partition_by('x_request_day'),
    unique_key='x_request_day',
    on_schema_change='append_new_columns',
    pre_hook=[
        {"sql": "{{ gpu_ledger.clear_when_history_changed(ref('int_api_requests_history_key'), [('x_built_at', 'timestamp')]) }}", "transaction": false},
        {"sql": "{{ gpu_ledger.clear_days('x_request_day', gpu_ledger.api_requests_changed_days()) }}", "transaction": false}
    ]
) }}
-- One row per LLM API request with its owning team and workload. The proxy's team_id is matched
-- (case-insensitive) to a registry team id, else a team alias, else a registry mapping of kind
-- 'api_team'; anything else is '(unallocated)'. The workload tag counts when the registry knows it,
-- else the workload of the api_team mapping, else '(unallocated)'.
-- Incremental by UTC day of started_at (x_request_day; macros/incremental_days.sql). A run rebuilds the
-- days of requests in API files loaded since the watermark x_loaded_at (new, late or restated logs), the
-- days the stored rows of those requests were on (a re-exported request that moved day) and the
-- backfill window: a request's row changes only when a file holding it is loaded (the latest load of
-- a request wins, stg_api_spend__requests; a re-export without a request keeps the earlier one); every day when int_api_requests_history_key changed (registry files, the SQL and
-- seeds upstream). A night reads the latest rows of the requests on its days only (macros/latest_rows.sql),
-- not the view's window over every request ever loaded; the rebuilt days are cleared first, so a day
-- whose requests all moved keeps no row.
{%- if is_incremental() %}
    {%- set plan = history_days(api_requests_changed_days(), ref('int_api_requests_history_key')) %}
{%- else %}
    {%- set plan = {'all': true, 'days': []} %}
{%- endif %}
-- depends_on: {{ source('api_spend', 'api_requests') }}
with requests as (
    {{ staged_rows_of_plan(ref('stg_api_spend__requests'), staged_api_requests, 'started_at', plan) }}
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
        requests.retries > 0 as retried,
        cast(requests.started_at as date) as x_request_day,
        {{ latest_file_load() }} as x_loaded_at,
        (select max(x_history_key) from {{ ref('int_api_requests_history_key') }}) as x_history_key,
        cast({{ dbt.current_timestamp() }} as timestamp) as x_built_at
    from requests
    left join teams on lower(trim(requests.team_tag)) = teams.match_value
    left join alias_lookup on lower(trim(requests.team_tag)) = alias_lookup.match_value
    left join api_mappings on lower(trim(requests.team_tag)) = api_mappings.match_value
    left join workloads on requests.workload_tag = workloads.workload_id
)

select * from final
