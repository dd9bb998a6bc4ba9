-- Warns with every GPU bill line charged above the on-demand list price of its SKU that day by more
-- than the tolerance (flag overbilled), or above the hard per-GPU-hour ceiling (flag implausible):
-- a billing error, a mis-tagged SKU, or a price the history does not know (fct_bill_vs_list_price;
-- bounds: warehouse/reference.py PLAUSIBILITY). Warn, not error: the bill is what was charged, and
-- the line is published with its flag for review.
{{ config(severity='warn', meta={'title': 'Bill above list price', 'counts': 'GPU bill lines'}) }}
select x_charge_key, source_file, source_line, instance_type, region, currency,
       effective_per_gpu_hour, list_per_gpu_hour, ratio, flag
from {{ ref('fct_bill_vs_list_price') }}
where flag in ('overbilled', 'implausible')
