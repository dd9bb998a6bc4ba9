-- Budget per team and month against both figures: the chargeback (what the team is charged,
-- fct_chargeback_monthly.total_cost) and the all-in showback (what its work cost, on a bill or
-- not, fct_showback_monthly). One row per team, month and currency with any cost in either.
with chargeback as (
    select team_id, billing_period_start as period, currency, sum(total_cost) as chargeback_total
    from {{ ref('fct_chargeback_monthly') }}
    group by all
),

showback as (
    select team_id, period, currency, sum(amount) as showback_total
    from {{ ref('fct_showback_monthly') }}
    group by all
),

teams as (
    select * from {{ ref('stg_registry__teams') }}
),

keys as (
    select team_id, period, currency from chargeback
    union
    select team_id, period, currency from showback
),

final as (
    select
        keys.team_id,
        keys.period,
        keys.currency,
        case when teams.budget_currency = keys.currency then teams.budget_monthly end as budget_monthly,
        {{ money('coalesce(chargeback.chargeback_total, 0)') }} as chargeback_total,
        {{ money('coalesce(showback.showback_total, 0)') }} as showback_total,
        case when teams.budget_currency = keys.currency
             then {{ money('teams.budget_monthly - coalesce(chargeback.chargeback_total, 0)') }} end
            as budget_remaining_chargeback,
        case when teams.budget_currency = keys.currency
             then {{ money('teams.budget_monthly - coalesce(showback.showback_total, 0)') }} end
            as budget_remaining_showback
    from keys
    left join chargeback
        on chargeback.team_id = keys.team_id and chargeback.period = keys.period and chargeback.currency = keys.currency
    left join showback
        on showback.team_id = keys.team_id and showback.period = keys.period and showback.currency = keys.currency
    left join teams on teams.team_id = keys.team_id
)

select * from final
