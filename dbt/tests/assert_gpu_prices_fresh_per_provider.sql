-- Catches a provider whose latest GPU price observation is older than var price_max_age_days
-- (default 400): its prices are stale, or its fetch or parser stopped delivering.
{{ config(severity='warn', meta={'title': 'GPU prices stale', 'counts': 'providers'}) }}

select provider, max(observed_at) as latest_observed_at
from {{ ref('int_gpu_prices_observed') }}
group by provider
having max(observed_at) < {{ dbt.dateadd('day', -1 * var('price_max_age_days', 400), dbt.current_timestamp()) }}
