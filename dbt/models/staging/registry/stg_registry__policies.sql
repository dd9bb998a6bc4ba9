-- Registry policies from the latest landed version of each registry file (an edited file replaces its
-- previous version; see docs/registry.md).
with source as (
    select * from {{ source('registry', 'registry_policies') }}
),

latest_files as (
    select file_hash
    from {{ ref('stg_audit__file_loads') }}
    where family = 'registry' and status = 'loaded'
    qualify row_number() over (partition by origin order by observed_at desc, loaded_at desc) = 1
),

final as (
    select source.* exclude (_loaded_at, _format)
    from source
    where _file_hash in (select file_hash from latest_files)
)

select * from final
