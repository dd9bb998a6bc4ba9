-- Exchange-rate observations, one per day and currency pair: a file landed again (or a second file
-- with the same pair and day) keeps its latest load.
with source as (
    select * from {{ source('fx', 'fx_rates') }}
),

deduplicated as (
    select *
    from source
    qualify row_number() over (
        partition by rate_date, upper(base), upper(quote)
        order by _loaded_at desc, _source_line desc
    ) = 1
)

select
    cast(rate_date as date) as rate_date,
    upper(base) as base,
    upper(quote) as quote,
    cast(rate as decimal(38, 12)) as rate,
    source,
    _source_file as source_file
from deduplicated
where rate > 0
