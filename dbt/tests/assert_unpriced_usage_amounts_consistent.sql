-- None becomes $0 silently: an unpriced row has a NULL amount, rate and currency and a reason; a
-- priced row (list-priced, owned-hardware) has an amount, a rate, a currency and no reason.
select *
from {{ ref('fct_off_bill_usage') }}
where (pricing_status = 'unpriced'
       and (amount is not null or rate_per_gpu_hour is not null or currency is not null or reason is null))
   or (pricing_status <> 'unpriced'
       and (amount is null or rate_per_gpu_hour is null or currency is null or reason is not null))
