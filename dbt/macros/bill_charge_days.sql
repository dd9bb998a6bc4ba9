{#- The days int_gpu_usage_hourly must rebuild because their GPU bill hours changed, among them the days of
   rows matched to a bill line that is gone (a bill re-delivered without it, a restated line under a new key).

   Looking for rows whose bill_charge_key no bill hour has any more reads every usage row, which grows with
   the history (at 365 days of fleet-256, 2.9M rows: 0.24 CPU s). So each day's rows store `x_bill_digest`,
   a digest of that day's GPU bill hours when it was built (bill_hour_day_digests: an order-free digest of
   the day's (charge key, hour, file) rows, distinct by the table's grain, with their count; null on a day
   with no bill hour, then and now), and a run rebuilds the stored days whose digest is not today's: one
   group by over the bill hours (306k rows, 0.013 CPU s) and the stored days' digests, 0.04 CPU s in all.
   A matched line's hours are on its rows' days, so a line gone changes their digest; a changed bill day
   whose rows matched none of its lines is rebuilt too (same rows). -#}

{#- Per UTC day of `plan` (every day: {'all': true, 'days': []}): `digest` of its GPU bill hours. -#}
{% macro bill_hour_day_digests(plan) -%}
    select cast(hour_start as date) as day,
           concat({{ gpu_ledger.rows_hash_digest(['x_charge_key', 'hour_start', 'x_file_hash']) }}, ':',
                  cast(count(*) as string)) as digest
    from {{ ref('int_gpu_billing_hours_mapped') }}
    where {{ gpu_ledger.in_plan('hour_start', plan) }}
    group by cast(hour_start as date)
{%- endmacro %}

{#- SQL (one date column) of the stored days whose bill digest is not today's. -#}
{% macro bill_changed_days() -%}
    select stored.usage_date
    from (select distinct usage_date, x_bill_digest from {{ this }}) as stored
    left join ({{ gpu_ledger.bill_hour_day_digests({'all': true, 'days': []}) }}) as current_digests
        on current_digests.day = stored.usage_date
    where stored.x_bill_digest is distinct from current_digests.digest
{%- endmacro %}
