-- The workload registry as published: the guide's Step 1 fields, owner team and readiness.
with workloads as (
    select * from {{ ref('stg_registry__workloads') }}
),

teams as (
    select team_id, name as team_name from {{ ref('stg_registry__teams') }}
),

final as (
    select {{ star_except(['_file_hash', '_source_file', '_source_line'], 'workloads') }}, teams.team_name
    from workloads
    left join teams using (team_id)
)

select * from final
