-- Every tag of every current charge that sits under an allocation key: its dimension (team,
-- workload, environment), its normalised key, its value, the key's precedence and where the tag
-- came from. Tag keys per dimension: the registry's policies.tag_keys.<dimension> when given, else
-- the built-in defaults (macro configured_tag_keys). Keys are compared by tag_key_norm, so the bill's
-- `CostCenter` (AWS, Azure), `cost-center` (GCP) and `Cost Center` all meet the registry's
-- cost_center: CamelCase, kebab, snake, spaces and case fold to one key (reference/tags.py).
-- Two tag sets per charge (tag_source): 'resource' (FOCUS Tags, the billed resource's tags) and
-- 'provider_allocation' (FOCUS 1.3 AllocatedTags, kept in x_extra: the tags of the resource the
-- provider allocated the line to; int_billing_charges_allocated reads them first). AllocatedTags that
-- are not a JSON object are ignored. Read by int_billing_charges_allocated (who gets the line) and
-- fct_unmatched_team_tags (team tag values no registered team answers to).
-- depends_on: {{ ref('stg_registry__policies') }}
with charges as (
    select charge_key, Tags, {{ json_text('x_extra', "'AllocatedTags'") }} as allocated_tags
    from {{ ref('int_billing_charges_current') }}
),

key_rank as (
    select dimension, tag_key, key_rank from {{ configured_tag_keys() }} as configured
),

tag_sets as (
    select charge_key, 'resource' as tag_source, cast(Tags as string) as tag_json
    from charges
    where Tags is not null
    union all
    select charge_key, 'provider_allocation' as tag_source, {{ json_object_or_null('allocated_tags') }} as tag_json
    from charges
    where allocated_tags is not null
),

charge_tag_keys as (
    select tag_sets.charge_key, tag_sets.tag_source, tag_sets.tag_json, {{ json_keys_exploded('tag_sets.tag_json') }} as raw_key
    from tag_sets
    where tag_sets.tag_json is not null
),

charge_tags as (
    select charge_key, tag_source, {{ tag_key_norm('raw_key') }} as tag_key,
           trim({{ json_text('tag_json', 'raw_key') }}) as tag_value
    from charge_tag_keys
),

final as (
    select charge_tags.charge_key, key_rank.dimension, charge_tags.tag_key, key_rank.key_rank, charge_tags.tag_value,
           charge_tags.tag_source
    from charge_tags
    inner join key_rank on key_rank.tag_key = charge_tags.tag_key
)

select * from final
