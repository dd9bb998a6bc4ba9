-- Warns with every listed on-demand GPU offer priced in a currency with no exchange rate within the
-- lookback window of the day it was observed: it cannot compete in the candidate comparison
-- (int_decision_instance_offers) until a rate for that day is loaded (inputs/fx/). Warn: the offer
-- is published in its own currency, only the conversion is missing.
{{ config(severity='warn', meta={'title': 'GPU offers without an exchange rate', 'counts': 'offers', 'dagster': {'ref': {'name': 'fct_gpu_offers_current'}}}) }}
select offers.provider, offers.sku, offers.region, offers.currency, offers.price_per_gpu_hour,
       cast(offers.last_observed_at as date) as observed_day
from {{ ref('fct_gpu_offers_current') }} as offers
left join {{ ref('fct_fx_rates_daily') }} as fx
    on fx.currency = offers.currency and fx.day = cast(offers.last_observed_at as date)
    and fx.reporting_currency = 'USD'
where offers.pricing_category = 'on-demand' and offers.is_listed and offers.currency <> 'USD'
  and fx.rate_to_reporting is null
