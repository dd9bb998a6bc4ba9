{# Rows of a registry raw table that come from the latest landed version of each registry file
   (an edited file replaces its previous version; docs/registry.md). Used by every registry
   staging model. #}
{% macro latest_registry_version(source_relation) %}
with source as (
    select * from {{ source_relation }}
),

latest_files as (
    select file_hash
    from {{ ref('stg_audit__file_loads') }}
    where family = 'registry' and status = 'loaded'
    qualify row_number() over (partition by origin order by observed_at desc, loaded_at desc) = 1
),

final as (
    select {{ gpu_ledger.star_except(['_loaded_at', '_format'], 'source') }}
    from source
    where _file_hash in (select file_hash from latest_files)
)

select * from final
{% endmacro %}
