{{ config(
    materialized='incremental',
    incremental_strategy=gpu_ledger.day_incremental_strategy(),
    partition_by=gpu_ledger.day_partition_by('billing_period_start'),
    unique_key='billing_period_start',
    on_schema_change='append_new_columns',
    pre_hook=[
        {"sql": "{{ gpu_ledger.clear_when_history_changed(ref('int_chargeback_lines_history_key'), [('x_inputs_digest', 'string'), ('x_built_at', 'timestamp')]) }}", "transaction": false},
        {"sql": "{{ gpu_ledger.clear_months('billing_period_start', gpu_ledger.chargeback_changed_months(), ref('int_chargeback_lines_history_key')) }}", "transaction": false}
    ]
) }}
-- Every invoice amount as a chargeback line, computed once per cost basis: `billed` (FOCUS
-- BilledCost, what the invoice says) and `amortised` (EffectiveCost: commitment purchases spread
-- over the usage they cover). Each basis is allocated on its own, so each conserves to the cent:
-- the billed lines of a period and currency add up to the invoice's BilledCost, the amortised
-- lines to its EffectiveCost (plus, in both, the API spend, its own invoice).
-- Cloud bill lines go direct to a team (tag, sub-account mapping, workload owner) or to
-- '(unallocated)'. Shared lines (governance, security, identity and management services with no
-- team tag, or lines tagged to the 'shared' team) are spread over the period's teams by policy
-- shared_cost_split: their direct cost share in that basis ('direct_cost', the default) or their
-- used GPU-hours of the month ('used_gpu_hours'; a month without GPU usage falls back to direct
-- cost); the rounding remainder goes to the largest team.
-- Unused commitment (CommitmentDiscountStatus = 'Unused': reserved capacity nobody used) is its
-- own line kind, placed by policy unused_commitment_policy: `unallocated` (default) keeps it on
-- '(unallocated)', `spread` spreads it like shared cost.
-- Credits and tax tagged to a team stay with it. Untagged credits and tax follow the cost they relate
-- to by policy credits_tax_split: `proportional` (default) spreads them over the period's teams in
-- proportion to each team's chargeback of that basis, period and currency before credits and tax
-- (direct, shared, idle, unused commitment; not the API spend, another invoice), so a credit never
-- leaves '(unallocated)' negative; `unallocated` keeps them on '(unallocated)'.
-- Idle GPU time on GPU bill lines (int_gpu_idle_by_workload) follows the registry's idle_policy:
-- `separate` shows it on an '(idle)' row, `owner_team` leaves it with the line's team as idle
-- cost, `share_by_usage` spreads it over the period's teams by used GPU-hours.
-- A line the provider already allocated (FOCUS 1.3 AllocatedMethodId, kept in x_extra) is charged as
-- the provider allocated it, before any policy of ours: never pooled as shared cost, unused
-- commitment, credit or tax (int_focus_allocation_splits never splits it either).
-- method says how each line reached its team: the ledger line's x_allocation_basis for a line
-- charged as is ('provider allocation: split-proportional', 'tag', 'subaccount', 'workload owner',
-- 'none'), else the split that placed it ('proportional-direct-cost', 'proportional-used-gpu-hours',
-- 'proportional-chargeback', 'separate-idle', 'owner', 'unallocated-policy', 'no-team-charged',
-- 'api-spend'); the names int_focus_allocation_splits writes to the export's AllocatedMethodId.
-- Incremental by billing period (calendar month; macros/incremental_months.sql, macros/cost_months.sql):
-- every pool and weight above is one basis, period and currency. A run rebuilds the periods whose input
-- stamps changed (ledger and API files with their rows per month, days the usage models rebuilt), the
-- periods of bill lines whose charge reaches into such a month, and the backfill window; every period
-- when int_chargeback_lines_history_key changed (registry files, the SQL and seeds upstream).
{%- if is_incremental() %}
    {%- set plan = month_plan(chargeback_changed_months(), ref('int_chargeback_lines_history_key')) %}
{%- else %}
    {%- set plan = {'all': true, 'days': []} %}
{%- endif %}
{{ months_rebuilt_comment(plan) }}
with ledger as (
    -- no idle portion is cut from a line the provider allocated (the export keeps it whole too)
    -- idle shares are one row per workload and day: the join keys alone make it a hash join (with the
    -- line's own conditions in the ON clause the engine compared every line with every idle row)
    select ledger.*,
           case when nullif({{ json_text('ledger.x_extra', "'AllocatedMethodId'") }}, '') is not null then 0
                when ledger.x_gpu_model is not null and ledger.ChargeCategory = 'Usage'
                     and coalesce(ledger.CommitmentDiscountStatus, '') <> 'Unused'
                    then coalesce(idle.idle_share, 0)
                else 0 end as idle_share,
           nullif({{ json_text('ledger.x_extra', "'AllocatedMethodId'") }}, '') is not null as provider_allocated
    from {{ ref('ledger_focus') }} as ledger
    left join {{ ref('int_gpu_idle_by_workload') }} as idle
        on idle.workload_id = ledger.x_workload_id and idle.day = cast(ledger.ChargePeriodStart as date)
    where {{ in_plan('ledger.BillingPeriodStart', plan) }}
),

policies as (
    select * from {{ ref('int_cost_policies') }}
),

api as (
    select * from {{ ref('fct_api_spend_daily') }}
    where {{ in_plan('day', plan) }}
),

bases as (
    select * from (values ('billed'), ('amortised')) as bases(basis)
),

ledger_by_basis as (
    -- One copy of every bill line per basis; the amortised basis falls back to BilledCost only
    -- where a format carries no EffectiveCost.
    select
        bases.basis,
        ledger.*,
        case when bases.basis = 'billed' then ledger.BilledCost
             else coalesce(ledger.EffectiveCost, ledger.BilledCost) end as basis_cost
    from ledger
    cross join bases
),

bill as (
    select
        basis,
        cast(BillingPeriodStart as date) as billing_period_start,
        BillingCurrency as currency,
        case
            when ChargeCategory = 'Credit' then 'credits'
            when ChargeCategory = 'Tax' then 'tax'
            when provider_allocated then 'direct_cost'
            when CommitmentDiscountStatus = 'Unused' then 'unused_pool'
            when x_team = 'shared'
                or (x_team = '(unallocated)'
                    and ServiceCategory in ('Management and Governance', 'Security', 'Identity'))
                then 'shared_pool'
            else 'direct_cost'
        end as line_kind,
        x_team as team_id,
        {{ money('basis_cost - ' ~ money('basis_cost * cast(idle_share as decimal(18, 12))')) }} as amount,
        x_allocation_basis as method,
        provider_allocated
    from ledger_by_basis
),

idle_parts as (
    select basis, cast(BillingPeriodStart as date) as billing_period_start, BillingCurrency as currency, x_team,
           {{ money('basis_cost * cast(idle_share as decimal(18, 12))') }} as amount
    from ledger_by_basis
    where idle_share > 0
),

usage_weights as (
    select cast(date_trunc('month', day) as date) as billing_period_start, team_id, sum(used_gpu_hours) as used
    from {{ ref('fct_gpu_utilisation_daily') }}
    where team_id <> '(unallocated)' and used_gpu_hours > 0 and {{ in_plan('day', plan) }}
    group by all
),

idle_pool as (
    select basis, billing_period_start, currency, sum(amount) as pool_amount from idle_parts group by all
),

idle_shared as (
    select idle_pool.basis, idle_pool.billing_period_start, idle_pool.currency, usage_weights.team_id,
           idle_pool.pool_amount,
           cast(round(idle_pool.pool_amount * cast(usage_weights.used / sum(usage_weights.used) over (
               partition by idle_pool.basis, idle_pool.billing_period_start, idle_pool.currency) as decimal(38, 12)), 12)
               as decimal(38, 12)) as amount,
           row_number() over (partition by idle_pool.basis, idle_pool.billing_period_start, idle_pool.currency
                              order by usage_weights.used desc, usage_weights.team_id) as rank
    from idle_pool
    inner join usage_weights using (billing_period_start)
),

idle_lines as (
    select basis, billing_period_start, currency, 'idle_cost' as line_kind,
           case policies.idle_policy when 'owner_team' then x_team else '(idle)' end as team_id, amount,
           case policies.idle_policy when 'owner_team' then 'owner' else 'separate-idle' end as method
    from idle_parts, policies
    where policies.idle_policy <> 'share_by_usage'
       or not exists (
           select 1 from idle_shared
           where idle_shared.basis = idle_parts.basis
               and idle_shared.billing_period_start = idle_parts.billing_period_start
       )
    union all
    select basis, billing_period_start, currency, 'idle_cost', team_id,
           amount + case when rank = 1
                         then pool_amount - sum(amount) over (partition by basis, billing_period_start, currency)
                         else 0 end,
           'proportional-used-gpu-hours'
    from idle_shared, policies
    where policies.idle_policy = 'share_by_usage'
),

api_lines as (
    -- The API spend is its own invoice: the same amount in both bases.
    select bases.basis, cast(date_trunc('month', api.day) as date) as billing_period_start, api.currency,
           'api_cost' as line_kind, coalesce(api.team_id, '(unallocated)') as team_id, api.cost as amount,
           'api-spend' as method
    from api
    cross join bases
),

direct_weights as (
    select basis, billing_period_start, currency, team_id, sum(amount) as direct,
           'proportional-direct-cost' as method
    from bill
    where line_kind = 'direct_cost' and team_id <> '(unallocated)'
    group by all
),

usage_pool_weights as (
    -- Policy used_gpu_hours: the month's used GPU-hours, for every basis and currency of the month.
    select keys.basis, keys.billing_period_start, keys.currency, usage_weights.team_id,
           cast(usage_weights.used as decimal(38, 12)) as direct, 'proportional-used-gpu-hours' as method
    from (select distinct basis, billing_period_start, currency from bill) as keys
    inner join usage_weights on usage_weights.billing_period_start = keys.billing_period_start
),

chosen_weights as (
    select usage_pool_weights.* from usage_pool_weights, policies
    where coalesce(policies.shared_cost_split, 'direct_cost') = 'used_gpu_hours'
    union all
    select direct_weights.* from direct_weights, policies
    where coalesce(policies.shared_cost_split, 'direct_cost') <> 'used_gpu_hours'
       or not exists (
           select 1 from usage_pool_weights
           where usage_pool_weights.billing_period_start = direct_weights.billing_period_start
       )
),

weights as (
    select *, direct / sum(direct) over (partition by basis, billing_period_start, currency) as share,
           row_number() over (partition by basis, billing_period_start, currency order by direct desc, team_id) as rank
    from chosen_weights
    qualify sum(direct) over (partition by basis, billing_period_start, currency) > 0
),

pool as (
    -- The shared pool, and the unused commitment when the policy spreads it.
    select bill.basis, bill.billing_period_start, bill.currency,
           case bill.line_kind when 'shared_pool' then 'shared_cost' else 'unused_commitment' end as pool_kind,
           sum(bill.amount) as pool_amount
    from bill, policies
    where bill.line_kind = 'shared_pool'
       or (bill.line_kind = 'unused_pool' and policies.unused_commitment_policy = 'spread')
    group by all
),

spread as (
    select pool.basis, pool.billing_period_start, pool.currency, pool.pool_kind, weights.team_id, weights.rank,
           weights.method,
           cast(round(pool.pool_amount * cast(weights.share as decimal(38, 12)), 12) as decimal(38, 12)) as amount,
           pool.pool_amount
    from pool
    inner join weights using (basis, billing_period_start, currency)
),

spread_balanced as (
    -- Rounding remainder goes to the largest team so each pool is conserved exactly.
    select basis, billing_period_start, currency, pool_kind as line_kind, team_id,
           amount + case when rank = 1
                         then pool_amount - sum(amount) over (partition by basis, billing_period_start, currency, pool_kind)
                         else 0 end as amount,
           method
    from spread
),

unspread_pool as (
    -- A period with a pool but no directly charged team keeps the pool unallocated.
    select basis, billing_period_start, currency, pool_kind as line_kind, '(unallocated)' as team_id,
           pool_amount as amount, 'no-team-charged' as method
    from pool
    where not exists (
        select 1 from weights
        where weights.basis = pool.basis and weights.billing_period_start = pool.billing_period_start
            and weights.currency = pool.currency
    )
),

unused_unallocated as (
    -- Policy unallocated: unused commitment is a visible line of '(unallocated)', never in a team.
    select bill.basis, bill.billing_period_start, bill.currency, 'unused_commitment' as line_kind,
           '(unallocated)' as team_id, bill.amount, 'unallocated-policy' as method
    from bill, policies
    where bill.line_kind = 'unused_pool' and policies.unused_commitment_policy <> 'spread'
),

charged_before_credits as (
    -- Each team's chargeback before credits and tax, per basis, period and currency: the weights of
    -- untagged credits and tax. Only teams with a positive charge take a share.
    select basis, billing_period_start, currency, team_id, sum(amount) as charged
    from (
        select basis, billing_period_start, currency, team_id, amount from bill where line_kind = 'direct_cost'
        union all select basis, billing_period_start, currency, team_id, amount from unused_unallocated
        union all select basis, billing_period_start, currency, team_id, amount from spread_balanced
        union all select basis, billing_period_start, currency, team_id, amount from unspread_pool
        union all select basis, billing_period_start, currency, team_id, amount from idle_lines
    ) as charges
    group by basis, billing_period_start, currency, team_id
    having sum(amount) > 0
),

credits_tax_weights as (
    select *, charged / sum(charged) over (partition by basis, billing_period_start, currency) as share,
           row_number() over (partition by basis, billing_period_start, currency order by charged desc, team_id) as rank
    from charged_before_credits
),

credits_tax_pool as (
    -- Untagged credits and tax under policy proportional.
    select bill.basis, bill.billing_period_start, bill.currency, bill.line_kind, sum(bill.amount) as pool_amount
    from bill, policies
    where bill.line_kind in ('credits', 'tax') and bill.team_id = '(unallocated)' and not bill.provider_allocated
        and coalesce(policies.credits_tax_split, 'proportional') <> 'unallocated'
    group by bill.basis, bill.billing_period_start, bill.currency, bill.line_kind
),

credits_tax_spread as (
    select credits_tax_pool.basis, credits_tax_pool.billing_period_start, credits_tax_pool.currency,
           credits_tax_pool.line_kind, credits_tax_weights.team_id, credits_tax_weights.rank,
           credits_tax_pool.pool_amount,
           cast(round(credits_tax_pool.pool_amount * cast(credits_tax_weights.share as decimal(38, 12)), 12)
               as decimal(38, 12)) as amount
    from credits_tax_pool
    inner join credits_tax_weights
        on credits_tax_weights.basis = credits_tax_pool.basis
        and credits_tax_weights.billing_period_start = credits_tax_pool.billing_period_start
        and credits_tax_weights.currency = credits_tax_pool.currency
),

credits_tax_balanced as (
    -- Rounding remainder goes to the largest team so each credit and tax pool is conserved exactly.
    select basis, billing_period_start, currency, line_kind, team_id,
           amount + case when rank = 1
                         then pool_amount - sum(amount) over (partition by basis, billing_period_start, currency, line_kind)
                         else 0 end as amount,
           'proportional-chargeback' as method
    from credits_tax_spread
),

credits_tax_unspread as (
    -- A period with untagged credits or tax but no team charged anything keeps them unallocated.
    select basis, billing_period_start, currency, line_kind, '(unallocated)' as team_id, pool_amount as amount,
           'no-team-charged' as method
    from credits_tax_pool
    where not exists (
        select 1 from credits_tax_weights
        where credits_tax_weights.basis = credits_tax_pool.basis
            and credits_tax_weights.billing_period_start = credits_tax_pool.billing_period_start
            and credits_tax_weights.currency = credits_tax_pool.currency
    )
),

final as (
    select bill.basis, bill.billing_period_start, bill.currency, bill.line_kind, bill.team_id, bill.amount,
           bill.method
    from bill, policies
    where bill.line_kind not in ('shared_pool', 'unused_pool')
        and not (bill.line_kind in ('credits', 'tax') and bill.team_id = '(unallocated)' and not bill.provider_allocated
                 and coalesce(policies.credits_tax_split, 'proportional') <> 'unallocated')
    union all select * from unused_unallocated
    union all select * from spread_balanced
    union all select * from unspread_pool
    union all select * from api_lines
    union all select * from idle_lines
    union all select * from credits_tax_balanced
    union all select * from credits_tax_unspread
)

select
    final.*,
    -- the month's input stamps, when the month was built, the latest file load and history key it saw
    digests.digest as x_inputs_digest,
    cast({{ dbt.current_timestamp() }} as timestamp) as x_built_at,
    {{ latest_file_load() }} as x_loaded_at,
    (select max(x_history_key) from {{ ref('int_chargeback_lines_history_key') }}) as x_history_key
from final
left join ({{ month_stamp_digests(chargeback_stamps()) }}) as digests
    on digests.month = cast(date_trunc('month', final.billing_period_start) as date)
