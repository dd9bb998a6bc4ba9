-- The rate converting one unit of each currency into the reporting currency, for every day an amount
-- may fall on (docs/cost_model.md, "Exchange rates"). Policy `reporting_currency` (default USD) and
-- `fx_lookback_days` (default 4).
-- Per observation date, the most direct path wins: a rate quoted in the reporting currency (C -> R),
-- else its inverse (R -> C), else the cross through EUR (EUR -> R / EUR -> C, both the same day: the
-- ECB publishes EUR rates only). A day without its own observation (a weekend, a TARGET holiday)
-- takes the latest observation at most `fx_lookback_days` earlier, and says how old it is; a day
-- further from any observation has no row here: the amounts on it are listed as not converted,
-- never converted at 1.0 or at a distant rate.
with policy as (
    select
        upper(coalesce(max(case when policy = 'reporting_currency' then {{ json_scalar_text('value') }} end), 'USD'))
            as reporting_currency,
        cast(coalesce(max(case when policy = 'fx_lookback_days' then {{ json_scalar_text('value') }} end), '4') as integer)
            as lookback_days
    from {{ ref('stg_registry__policies') }}
),

rates as (
    select * from {{ ref('stg_fx__rates') }}
),

paths as (
    select rates.rate_date, rates.base as currency, cast(rates.rate as double) as to_reporting, 1 as path_rank,
           'direct ' || rates.base || '->' || rates.quote as path, rates.source
    from rates
    cross join policy
    where rates.quote = policy.reporting_currency
    union all
    select rates.rate_date, rates.quote, 1.0 / cast(rates.rate as double), 2,
           'inverse of ' || rates.base || '->' || rates.quote, rates.source
    from rates
    cross join policy
    where rates.base = policy.reporting_currency
    union all
    select r.rate_date, c.quote, cast(r.rate as double) / cast(c.rate as double), 3,
           'cross via EUR: EUR->' || r.quote || ' / EUR->' || c.quote, r.source
    from rates as r
    inner join rates as c on c.rate_date = r.rate_date and c.base = 'EUR' and r.base = 'EUR'
    cross join policy
    where r.quote = policy.reporting_currency and c.quote <> policy.reporting_currency
),

observed as (
    select paths.*, policy.reporting_currency, policy.lookback_days
    from paths
    cross join policy
    qualify row_number() over (partition by paths.rate_date, paths.currency order by paths.path_rank) = 1
),

spread as (
    select observed.*, observed.rate_date + cast(d.offset_days as integer) as day, cast(d.offset_days as integer) as rate_age_days
    from observed, {{ lateral_explode(int_series(0, 'observed.lookback_days')) }} as d(offset_days)
)

select
    day,
    currency,
    reporting_currency,
    -- Rounded to 10 decimals in DECIMAL: a cross rate is a quotient, stored exactly from here on.
    cast(round(to_reporting, 10) as decimal(38, 12)) as rate_to_reporting,
    rate_date,
    rate_age_days,
    path as rate_path,
    source as rate_source
from spread
qualify row_number() over (partition by day, currency order by rate_date desc) = 1
