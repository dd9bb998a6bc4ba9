-- Every tag of every current charge that sits under an allocation key: its dimension (team,
-- workload, environment), its normalised key, its value and the key's precedence. Tag keys per
-- dimension: the registry's policies.tag_keys.<dimension> when given, else the built-in defaults
-- (macro configured_tag_keys). Keys are compared by tag_key_norm, so the bill's `CostCenter` (AWS,
-- Azure), `cost-center` (GCP) and `Cost Center` all meet the registry's cost_center: CamelCase,
-- kebab, snake, spaces and case fold to one key (warehouse/reference_tags.py). Read by
-- int_billing_charges_allocated (who gets the line) and fct_unmatched_team_tags (team tag values no
-- registered team answers to).
-- depends_on: {{ ref('stg_registry__policies') }}
with charges as (
    select charge_key, Tags from {{ ref('int_billing_charges_current') }}
),

key_rank as (
    select dimension, tag_key, key_rank from {{ configured_tag_keys() }} as configured
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
