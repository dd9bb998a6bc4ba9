-- Catches GPU-looking SKUs with a price but no GPU model (missing from instance_gpu_map or
-- gpu_catalog): their prices cannot be compared per GPU-hour until the seed is extended.
{{ config(severity='warn', meta={'title': 'GPU SKUs with a price but no GPU model', 'counts': 'SKUs'}) }}

select provider, sku, unmapped_reason, count(*) as observations
from {{ ref('int_gpu_prices_unmapped') }}
group by provider, sku, unmapped_reason
