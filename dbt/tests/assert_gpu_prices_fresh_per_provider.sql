-- Catches a provider whose latest dated GPU price observation is older than var price_max_age_days
-- (default 400): its prices are stale, or its fetch or parser stopped delivering. A provider whose
-- prices are all undated (nothing in the file or its name dates them, not fetched) is listed too:
-- its freshness is unknown, and the file's load time must not pass for an observation.
{{ config(severity='warn', meta={'title': 'GPU prices stale or undated', 'counts': 'providers'}) }}

with latest as (
    select
        provider,
        max(case when observed_at_basis <> 'undated' then observed_at end) as latest_observed_at,
        count(case when observed_at_basis = 'undated' then 1 end) as undated_observations
    from {{ ref('int_gpu_prices_observed') }}
    group by provider
)

select
    provider,
    latest_observed_at,
    undated_observations,
    case when latest_observed_at is null then 'undated' else 'stale' end as reason
from latest
where latest_observed_at is null
    or latest_observed_at < {{ dbt.dateadd('day', -1 * var('price_max_age_days', 400), dbt.current_timestamp()) }}
