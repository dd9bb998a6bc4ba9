-- One machine named two ways (telemetry's Hostname 'gpu-node-01.dc1' vs the scheduler's node 'gn01'):
-- registry mappings of kind host (docs/registry.md) say which node a host name is. Grain: alias_key.
-- Names that differ only by case or domain need no mapping (macro host_key).
with mappings as (
    select * from {{ ref('stg_registry__mappings') }}
    where kind = 'host' and target_host is not null
),

final as (
    select {{ host_key('match_value') }} as alias_key, {{ host_key('target_host') }} as node_key
    from mappings
    qualify row_number() over (partition by {{ host_key('match_value') }} order by {{ host_key('target_host') }}) = 1
)

select * from final
