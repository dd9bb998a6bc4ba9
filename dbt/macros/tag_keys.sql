{# The tag keys each allocation dimension reads, normalised, with their precedence (rank 1 wins):
   the registry's policies.tag_keys.<dimension> when given (any spelling: `CostCenter` and `cost-center`
   are one key), else the built-in list (reference/tags.py DEFAULT_TAG_KEYS). One definition,
   read by int_billing_charge_tags (who gets a line) and fct_unmatched_tag_keys (keys nobody reads).
   Callers add `-- depends_on: {{ ref('stg_registry__policies') }}`. #}
{% macro configured_tag_keys() %}
(
    with policies as (
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
    )

    select dimension, tag_key, min(key_rank) as key_rank from registry_keys group by dimension, tag_key
    union all
    select dimension, tag_key, key_rank from {{ default_tag_keys() }}
    where dimension not in (select dimension from registry_keys)
)
{% endmacro %}
