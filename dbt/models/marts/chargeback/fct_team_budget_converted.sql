-- Budget per team and month against all the team's spend, whatever currency it came in
-- (docs/cost_model.md, "Budgets in another currency"). fct_team_budget_monthly compares a budget only
-- with spend in the budget's own currency; here every currency's chargeback and all-in showback is
-- converted into the budget's currency and compared there: the budget is a commitment in its own
-- currency, so it stays fixed and only the foreign spend moves with the rates. Spend in currency C
-- converts into budget currency B through the reporting currency R at the month's rates
-- (fct_fx_month_rates, the rates the money table uses): x rate(C->R) / rate(B->R); spend already in
-- B stays exact. The same figures in the reporting currency sit beside them (budget x rate(B->R)).
-- A currency without a rate in the month leaves the converted figures null and says which.
with budget_rows as (
    select * from {{ ref('fct_team_budget_monthly') }}
),

teams as (
    select team_id, budget_monthly, budget_currency from {{ ref('stg_registry__teams') }}
),

rates as (
    select period, currency, reporting_currency, cast(rate_to_reporting as decimal(18, 10)) as rate
    from {{ ref('fct_fx_month_rates') }}
),

policy as (
    select coalesce(max(reporting_currency), 'USD') as reporting_currency from rates
),

spend as (
    select budget_rows.team_id, budget_rows.period, budget_rows.currency,
           budget_rows.chargeback_total, budget_rows.showback_total,
           teams.budget_monthly, teams.budget_currency,
           spend_rate.rate as spend_rate, budget_rate.rate as budget_rate,
           -- in the budget currency: exact when the spend is in it, else through the reporting currency
           case when budget_rows.currency = teams.budget_currency then budget_rows.chargeback_total
                else {{ money('cast(budget_rows.chargeback_total * spend_rate.rate as double) / cast(budget_rate.rate as double)') }}
           end as chargeback_in_budget,
           case when budget_rows.currency = teams.budget_currency then budget_rows.showback_total
                else {{ money('cast(budget_rows.showback_total * spend_rate.rate as double) / cast(budget_rate.rate as double)') }}
           end as showback_in_budget
    from budget_rows
    left join teams on teams.team_id = budget_rows.team_id
    left join rates as spend_rate
        on spend_rate.period = budget_rows.period and spend_rate.currency = budget_rows.currency
    left join rates as budget_rate
        on budget_rate.period = budget_rows.period and budget_rate.currency = teams.budget_currency
),

per_team as (
    select team_id, period,
           max(budget_monthly) as budget_monthly,
           max(budget_currency) as budget_currency,
           max(budget_rate) as budget_rate,
           count(*) filter (where spend_rate is null) as currencies_without_rate,
           count(*) filter (where currency <> budget_currency and (spend_rate is null or budget_rate is null))
               as currencies_not_in_budget_currency,
           {{ sorted_distinct_join('currency', ', ', 'spend_rate is null') }} as currencies_without_rate_list,
           sum(chargeback_in_budget) as chargeback_in_budget,
           sum(showback_in_budget) as showback_in_budget,
           sum(chargeback_total * spend_rate) as chargeback_reporting,
           sum(showback_total * spend_rate) as showback_reporting,
           {{ sorted_distinct_join("currency || ' ' || cast(round(chargeback_total, 2) as string) || ' / '
                                    || cast(round(showback_total, 2) as string)", '; ') }} as native_spend,
           {{ sorted_distinct_join("currency || ' ' || cast(round(spend_rate, 6) as string)", '; ', 'spend_rate is not null') }}
               as spend_rates
    from spend
    group by team_id, period
),

final as (
    select
        per_team.team_id,
        per_team.period,
        per_team.budget_currency,
        {{ money('per_team.budget_monthly') }} as budget_monthly,
        case when per_team.budget_monthly is not null and per_team.currencies_not_in_budget_currency = 0
             then {{ money('per_team.chargeback_in_budget') }} end as chargeback_in_budget_currency,
        case when per_team.budget_monthly is not null and per_team.currencies_not_in_budget_currency = 0
             then {{ money('per_team.showback_in_budget') }} end as showback_in_budget_currency,
        policy.reporting_currency,
        {{ money('per_team.budget_monthly * per_team.budget_rate') }} as budget_reporting,
        case when per_team.currencies_without_rate = 0 then {{ money('per_team.chargeback_reporting') }} end
            as chargeback_reporting,
        case when per_team.currencies_without_rate = 0 then {{ money('per_team.showback_reporting') }} end
            as showback_reporting,
        per_team.native_spend,
        per_team.spend_rates,
        per_team.budget_rate,
        case when per_team.currencies_without_rate > 0
                 then 'no rate for ' || per_team.currencies_without_rate_list || ' in '
                      || cast(per_team.period as string) || ': not converted'
             when per_team.budget_monthly is not null and per_team.currencies_not_in_budget_currency > 0
                 then 'no rate for the budget currency ' || per_team.budget_currency || ' in '
                      || cast(per_team.period as string) || ': spend not converted into it'
        end as fx_gap_reason
    from per_team
    cross join policy
)

select
    final.*,
    {{ money('budget_monthly - chargeback_in_budget_currency') }} as budget_remaining_chargeback,
    {{ money('budget_monthly - showback_in_budget_currency') }} as budget_remaining_showback
from final
