-- Loud gaps: the GPU-hours nothing prices (no bill line, no run record, no list price, no owned rate),
-- each with its reason and a NULL amount, never 0. The priced rows beside them are in fct_off_bill_usage.
select *
from {{ ref('fct_off_bill_usage') }}
where pricing_status = 'unpriced'
