-- Where scheduler and telemetry pools run, from two registry policies (docs/registry.md):
--   owned_hardware.sites: GPUs the organisation owns (on-prem, colocation); their usage is priced
--     from the owned_hardware policy (capex amortisation + power + operations per GPU-hour);
--   usage_providers: rented pools that have no bill line in the ledger (a neocloud paid by card, a
--     cluster billed elsewhere); their usage is list-priced at that provider's observed price.
-- One row per site x match pattern. A pattern is matched, case-insensitively and with '*' as a
-- wildcard, against the usage pool id: 'slurm:<cluster>', 'kubernetes:<cluster>', 'telemetry:<host>'.
-- Read from stg_registry__policies directly (int_cost_policies holds the scalar policies).
with policies as (
    select policy, value from {{ ref('stg_registry__policies') }}
    where policy in ('owned_hardware', 'usage_providers')
),

owned_entries as (
    select {{ explode_list(json_object_list(json_member('value', "'sites'"))) }} as entry
    from policies
    where policy = 'owned_hardware'
),

rented_entries as (
    select {{ explode_list(json_object_list('value')) }} as entry
    from policies
    where policy = 'usage_providers'
),

entries as (
    select true as is_owned, 0 as site_priority, entry from owned_entries
    union all
    select false as is_owned, 1 as site_priority, entry from rented_entries
),

patterns as (
    select
        is_owned,
        site_priority,
        entry,
        {{ explode_list(json_string_list(json_member('entry', "'match'"))) }} as pattern
    from entries
),

final as (
    select
        coalesce({{ json_text('entry', "'site'") }}, lower({{ json_text('entry', "'provider'") }})) as site,
        is_owned,
        site_priority,
        lower(trim(pattern)) as pattern,
        replace(lower(trim(pattern)), '*', '%') as like_pattern,
        case when not is_owned then lower({{ json_text('entry', "'provider'") }}) end as provider,
        -- Our own formats write on_demand / reserved; the price catalog says on-demand / reserved-1y.
        case when not is_owned then
            case replace(lower(coalesce({{ json_text('entry', "'pricing_category'") }}, 'on-demand')), '_', '-')
                when 'reserved' then 'reserved-1y'
                when 'ondemand' then 'on-demand'
                else replace(lower(coalesce({{ json_text('entry', "'pricing_category'") }}, 'on-demand')), '_', '-')
            end
        end as pricing_category,
        cast(entry as string) as site_policy
    from patterns
    where pattern is not null and trim(pattern) <> ''
)

select * from final
