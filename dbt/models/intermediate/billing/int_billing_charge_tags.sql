-- Every tag of every current charge that sits under an allocation key: its dimension (team,
-- workload, environment), its normalised key, its value and the key's precedence. Tag keys per
-- dimension: the registry's policies.tag_keys.<dimension> when given, else the built-in defaults
-- (warehouse/reference.py DEFAULT_TAG_KEYS, macro default_tag_keys); keys compared by tag_key_norm
-- (trimmed, lower case, '-' and ' ' as '_'). Read by int_billing_charges_allocated (who gets the
-- line) and fct_unmatched_team_tags (team tag values no registered team answers to).
with charges as (
    select charge_key, Tags from {{ ref('int_billing_charges_current') }}
),

policies as (
    select * from {{ ref('stg_registry__policies') }} where policy = 'tag_keys'
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

charge_tag_keys as (
    select charges.charge_key, charges.Tags, {{ json_keys_exploded('charges.Tags') }} as raw_key
    from charges
    where charges.Tags is not null
),

charge_tags as (
    select charge_key, {{ tag_key_norm('raw_key') }} as tag_key, trim({{ json_text('Tags', 'raw_key') }}) as tag_value
    from charge_tag_keys
),

final as (
    select charge_tags.charge_key, key_rank.dimension, charge_tags.tag_key, key_rank.key_rank, charge_tags.tag_value
    from charge_tags
    inner join key_rank on key_rank.tag_key = charge_tags.tag_key
)

select * from final
