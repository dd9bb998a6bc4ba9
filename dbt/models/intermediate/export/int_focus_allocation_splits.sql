{{ config(
    materialized='incremental',
    incremental_strategy=gpu_ledger.day_incremental_strategy(),
    partition_by=gpu_ledger.day_partition_by('x_billing_period'),
    unique_key='x_billing_period',
    on_schema_change='append_new_columns',
    pre_hook=[
        {"sql": "{{ gpu_ledger.clear_when_history_changed(ref('int_focus_export_history_key'), [('x_inputs_digest', 'string'), ('x_built_at', 'timestamp')]) }}", "transaction": false},
        {"sql": "{{ gpu_ledger.clear_vanished_days('x_billing_period', 'select distinct cast(BillingPeriodStart as date) from ' ~ ref('ledger_focus')) }}", "transaction": false}
    ]
) }}
-- How every ledger line splits by allocation, line by line (FOCUS 1.3 split cost
-- allocation). int_chargeback_lines only holds team totals per basis, so the per-line split is
-- computed here with the chargeback's own weights on the registry's chosen basis (policy
-- chargeback_basis):
--   * a GPU usage line with idle time (int_gpu_idle_by_workload.idle_share) splits into its used
--     portion (kept by the line's team, method 'owner') and its idle portion, placed by idle_policy:
--     separate -> '(idle)' ('separate-idle'), owner_team -> the line's team ('owner'),
--     share_by_usage -> the month's teams by used GPU-hours ('proportional-used-gpu-hours');
--   * a shared line (untagged governance/security/identity/management, or team 'shared'), and unused
--     commitment under unused_commitment_policy 'spread', splits over the period's teams by policy
--     shared_cost_split: their direct cost share ('proportional-direct-cost') or their used GPU-hours
--     of the month ('proportional-used-gpu-hours'; a month without GPU usage: direct cost);
--   * an untagged credit or tax line under policy credits_tax_split 'proportional' (the default) splits
--     over the period's teams by their chargeback before credits and tax on the chosen basis (direct,
--     shared, idle and unused commitment lines of int_chargeback_lines), method 'proportional-chargeback';
--   * a line the provider already allocated (a FOCUS 1.3 source sent AllocatedMethodId; kept in
--     x_extra) is one unsplit part, with the team its AllocatedTags name (int_billing_charges_allocated):
--     the provider's allocation columns are the line's, and a second split on top of it would
--     contradict them (no spread, no idle portion; its cost weighs in the direct-cost weights, as
--     int_chargeback_lines, which charges it the same way, counts it);
--   * every other line is one unsplit part (method null).
-- Each part's amounts are exact to 12 decimals; the rounding remainder of a split goes to its largest
-- share, so the parts of a line add up to the line exactly (assert_focus_export_partitions_ledger).
-- Incremental by billing period (x_billing_period, the line's BillingPeriodStart as a date;
-- macros/incremental_days.sql): every weight above is one period's (its direct costs, used GPU-hours and
-- chargeback) and every idle share one day's, so the rows of a period depend on nothing outside it but
-- the policies. A run rebuilds the periods of billing files loaded since the watermark x_loaded_at (a new
-- bill, a re-delivery: it replaces the lines of its own periods; lines it drops move the period's
-- chargeback weights), the periods whose small per-period inputs
-- (used GPU-hours, the chargeback weights, the idle shares of their lines' days: macro
-- allocation_split_inputs) digest otherwise than the x_inputs_digest stored on their rows, and the backfill
-- window; every period when int_focus_export_history_key changed (registry files, the SQL and seeds
-- upstream). A nightly usage day rebuilds its month, not the history.
{%- if is_incremental() %}
    {%- set changed_periods_sql %}
        select distinct cast(ledger.BillingPeriodStart as date) as period
        from {{ ref('ledger_focus') }} as ledger
        inner join ({{ files_loaded_since_last_build() }}) as new_files on new_files.file_hash = ledger.x_file_hash
        union
        select coalesce(current_digests.period, stored.period)
        from (
            select * from ({{ allocation_split_digests({'all': true, 'days': []}) }}) as digests
            where period in (select cast(BillingPeriodStart as date) from {{ ref('ledger_focus') }})
        ) as current_digests
        full outer join (select distinct x_billing_period as period, x_inputs_digest as digest from {{ this }}) as stored
            on stored.period = current_digests.period
        where stored.digest is distinct from current_digests.digest
    {%- endset %}
    {%- set plan = history_days(changed_periods_sql, ref('int_focus_export_history_key')) %}
{%- else %}
    {%- set plan = {'all': true, 'days': []} %}
{%- endif %}
with policies as (
    select * from {{ ref('int_cost_policies') }}
),

ledger as (
    select
        ledger.x_charge_key,
        cast(ledger.ChargePeriodStart as date) as charge_day,
        cast(ledger.BillingPeriodStart as date) as billing_period_start,
        ledger.BillingCurrency as currency,
        ledger.x_team,
        ledger.x_workload_id,
        nullif({{ json_text('ledger.x_extra', "'AllocatedMethodId'") }}, '') is not null as provider_allocated,
        case
            when ledger.ChargeCategory = 'Credit' then 'credits'
            when ledger.ChargeCategory = 'Tax' then 'tax'
            when nullif({{ json_text('ledger.x_extra', "'AllocatedMethodId'") }}, '') is not null then 'direct_cost'
            when ledger.CommitmentDiscountStatus = 'Unused' then 'unused_pool'
            when ledger.x_team = 'shared'
                or (ledger.x_team = '(unallocated)'
                    and ledger.ServiceCategory in ('Management and Governance', 'Security', 'Identity'))
                then 'shared_pool'
            else 'direct_cost'
        end as line_kind,
        -- the idle share (none for a line the provider allocated: int_chargeback_lines cuts none either)
        cast(case when nullif({{ json_text('ledger.x_extra', "'AllocatedMethodId'") }}, '') is not null then 0
                  else coalesce(idle.idle_share, 0) end as decimal(18, 12)) as idle_share,
        case when policies.chargeback_basis = 'billed' then ledger.BilledCost
             else coalesce(ledger.EffectiveCost, ledger.BilledCost) end as basis_cost
    from {{ ref('ledger_focus') }} as ledger
    cross join policies
    -- Only a GPU usage line (not an unused commitment) takes an idle share. That test sits in the join key
    -- (NULL: no match), not beside it: a LEFT join whose condition also tests the left row alone ran as a
    -- nested-loop join over every idle day of the history (0.26 s of a 365-day night), the key as a hash join.
    left join {{ ref('int_gpu_idle_by_workload') }} as idle
        on idle.workload_id = case when ledger.x_gpu_model is not null and ledger.ChargeCategory = 'Usage'
                                        and coalesce(ledger.CommitmentDiscountStatus, '') <> 'Unused'
                                   then ledger.x_workload_id end
        and idle.day = cast(ledger.ChargePeriodStart as date)
    where {{ in_plan('cast(ledger.BillingPeriodStart as date)', plan) }}
),

direct_weights as (
    -- The chargeback's weights: each team's direct cost of the period and currency on the chosen basis.
    select billing_period_start, currency, x_team as team_id,
           sum({{ money('basis_cost - ' ~ money('basis_cost * idle_share')) }}) as weight
    from ledger
    where line_kind = 'direct_cost' and x_team <> '(unallocated)'
    group by billing_period_start, currency, x_team
),

direct_totals as (
    select billing_period_start, currency, sum(weight) as weight_total
    from direct_weights
    group by billing_period_start, currency
    having sum(weight) > 0
),

usage_weights as (
    select cast(date_trunc('month', day) as date) as billing_period_start, team_id, sum(used_gpu_hours) as weight
    from {{ ref('fct_gpu_utilisation_daily') }}
    where team_id <> '(unallocated)' and used_gpu_hours > 0
      and {{ in_plan("cast(date_trunc('month', day) as date)", plan) }}
    group by cast(date_trunc('month', day) as date), team_id
),

usage_totals as (
    select billing_period_start, sum(weight) as weight_total from usage_weights group by billing_period_start
),

pool_weights as (
    -- The shared pool's weights per period and currency, as int_chargeback_lines chooses them.
    select usage_weights.billing_period_start, keys.currency, usage_weights.team_id,
           cast(usage_weights.weight as decimal(38, 12)) as weight,
           cast(usage_totals.weight_total as decimal(38, 12)) as weight_total,
           'proportional-used-gpu-hours' as method
    from (select distinct billing_period_start, currency from ledger) as keys
    inner join usage_weights on usage_weights.billing_period_start = keys.billing_period_start
    inner join usage_totals on usage_totals.billing_period_start = keys.billing_period_start
    cross join policies
    where coalesce(policies.shared_cost_split, 'direct_cost') = 'used_gpu_hours'
    union all
    select direct_weights.billing_period_start, direct_weights.currency, direct_weights.team_id,
           direct_weights.weight, direct_totals.weight_total, 'proportional-direct-cost' as method
    from direct_weights
    inner join direct_totals
        on direct_totals.billing_period_start = direct_weights.billing_period_start
        and direct_totals.currency = direct_weights.currency
    cross join policies
    where coalesce(policies.shared_cost_split, 'direct_cost') <> 'used_gpu_hours'
       or not exists (select 1 from usage_totals where usage_totals.billing_period_start = direct_weights.billing_period_start)
),

credit_tax_weights as (
    -- The weights int_chargeback_lines spreads untagged credits and tax by, on the chosen basis.
    select lines.billing_period_start, lines.currency, lines.team_id, sum(lines.amount) as weight
    from {{ ref('int_chargeback_lines') }} as lines
    cross join policies
    where lines.basis = policies.chargeback_basis
        and lines.line_kind in ('direct_cost', 'shared_cost', 'idle_cost', 'unused_commitment')
        and {{ in_plan('lines.billing_period_start', plan) }}
    group by lines.billing_period_start, lines.currency, lines.team_id
    having sum(lines.amount) > 0
),

credit_tax_totals as (
    select billing_period_start, currency, sum(weight) as weight_total
    from credit_tax_weights
    group by billing_period_start, currency
),

rest_credit_tax as (
    select ledger.x_charge_key, 'rest' as portion, credit_tax_weights.team_id, cast(null as string) as workload_id,
           'proportional-chargeback' as method,
           {{ money('credit_tax_weights.weight') }} as weight, {{ money('credit_tax_totals.weight_total') }} as weight_total
    from ledger
    cross join policies
    inner join credit_tax_weights
        on credit_tax_weights.billing_period_start = ledger.billing_period_start
        and credit_tax_weights.currency = ledger.currency
    inner join credit_tax_totals
        on credit_tax_totals.billing_period_start = ledger.billing_period_start
        and credit_tax_totals.currency = ledger.currency
    where ledger.line_kind in ('credits', 'tax') and ledger.x_team = '(unallocated)' and not ledger.provider_allocated
        and coalesce(policies.credits_tax_split, 'proportional') <> 'unallocated'
),

rest_pool_spread as (
    select ledger.x_charge_key, 'rest' as portion, pool_weights.team_id, cast(null as string) as workload_id,
           pool_weights.method,
           {{ money('pool_weights.weight') }} as weight, {{ money('pool_weights.weight_total') }} as weight_total
    from ledger
    cross join policies
    inner join pool_weights
        on pool_weights.billing_period_start = ledger.billing_period_start and pool_weights.currency = ledger.currency
    -- A team with no direct cost would take a zero share: no row for it.
    where pool_weights.weight <> 0 and not ledger.provider_allocated
        and (ledger.line_kind = 'shared_pool'
             or (ledger.line_kind = 'unused_pool' and policies.unused_commitment_policy = 'spread'))
),

rest_spread as (
    select * from rest_pool_spread
    union all select * from rest_credit_tax
),

rest_single as (
    select ledger.x_charge_key, 'rest' as portion,
           case when ledger.line_kind in ('shared_pool', 'unused_pool') and not ledger.provider_allocated
                then '(unallocated)' else ledger.x_team end as team_id,
           ledger.x_workload_id as workload_id,
           case when ledger.idle_share > 0 then 'owner' end as method,
           {{ money('1') }} as weight, {{ money('1') }} as weight_total
    from ledger
    where ledger.x_charge_key not in (select x_charge_key from rest_spread)
),

idle_spread as (
    select ledger.x_charge_key, 'idle' as portion, usage_weights.team_id, cast(null as string) as workload_id,
           'proportional-used-gpu-hours' as method,
           {{ money('usage_weights.weight') }} as weight, {{ money('usage_totals.weight_total') }} as weight_total
    from ledger
    cross join policies
    inner join usage_totals on usage_totals.billing_period_start = ledger.billing_period_start
    inner join usage_weights on usage_weights.billing_period_start = ledger.billing_period_start
    where ledger.idle_share > 0 and policies.idle_policy = 'share_by_usage'
),

idle_single as (
    select ledger.x_charge_key, 'idle' as portion,
           case when policies.idle_policy = 'owner_team' then ledger.x_team else '(idle)' end as team_id,
           ledger.x_workload_id as workload_id,
           case when policies.idle_policy = 'owner_team' then 'owner' else 'separate-idle' end as method,
           {{ money('1') }} as weight, {{ money('1') }} as weight_total
    from ledger
    cross join policies
    where ledger.idle_share > 0
        and ledger.x_charge_key not in (select x_charge_key from idle_spread)
),

targets as (
    select * from rest_spread
    union all select * from rest_single
    union all select * from idle_spread
    union all select * from idle_single
),

ranked as (
    select
        targets.*,
        ledger.charge_day,
        ledger.billing_period_start,
        ledger.idle_share,
        cast(case when targets.portion = 'idle' then ledger.idle_share else 1 - ledger.idle_share end as decimal(18, 12))
            as portion_fraction,
        cast(targets.weight / targets.weight_total as decimal(18, 12)) as share,
        row_number() over (partition by targets.x_charge_key, targets.portion
                           order by targets.weight desc, targets.team_id) as share_rank,
        count(*) over (partition by targets.x_charge_key) as parts_of_line
    from targets
    inner join ledger on ledger.x_charge_key = targets.x_charge_key
),

input_digests as (
    {{ allocation_split_digests(plan) }}
),

final as (
    select
        x_charge_key, portion, team_id, workload_id,
        method, weight, weight_total, share, share_rank, idle_share, portion_fraction, parts_of_line, charge_day,
        ranked.billing_period_start as x_billing_period,
        input_digests.digest as x_inputs_digest,
        {{ latest_file_load() }} as x_loaded_at,
        (select max(x_history_key) from {{ ref('int_focus_export_history_key') }}) as x_history_key,
        cast({{ dbt.current_timestamp() }} as timestamp) as x_built_at
    from ranked
    left join input_digests on input_digests.period = ranked.billing_period_start
)

select * from final
