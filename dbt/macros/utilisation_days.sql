{#- Change detection of int_gpu_utilisation_daily (incremental by UTC day, macros/incremental_days.sql).

   utilisation_day_digests(plan): per UTC day of `plan` (every day: {'all': true}), `digest`, an md5 over
   the day's inputs as cheap stamps: the build stamp of int_gpu_usage_hourly's day (it rewrites a day whole
   with one x_built_at), a hash of the day's int_gpu_idle_hourly rows and of its int_gpu_billing_hours_mapped
   rows (rebuilt whole each run, no stamps of their own; rows_hash_digest over the columns the model reads
   and the grain), and the code of the model and of everything upstream of it (a changed rule moves every
   day). A registry, price or ledger change reaches the idle and billed rows it moves, so their days.

   utilisation_changed_days(): SQL of the days whose digest is not the one stored on the model's rows:
   days that gained, lost or changed an input row, and days the model holds that no input holds any more
   (their rows are deleted first by the pre-hook clear_days). A day of inputs that gives no rows is
   rebuilt every run (it holds none, so that costs little). -#}
{% macro utilisation_day_digests(plan) -%}
    select day, md5(concat_ws('#', '{{ gpu_ledger.upstream_code_digest(model.unique_id) }}',
                              coalesce(max(usage_part), '~'), coalesce(max(idle_part), '~'),
                              coalesce(max(bill_part), '~'))) as digest
    from (
        select usage_date as day, cast(max(x_built_at) as string) as usage_part,
               cast(null as string) as idle_part, cast(null as string) as bill_part
        from {{ ref('int_gpu_usage_hourly') }}
        where {{ gpu_ledger.in_plan('hour_start', plan) }}
        group by usage_date
        union all
        select cast(hour_start as date), cast(null as string),
               {{ gpu_ledger.rows_hash_digest(['pool_id', 'gpu_model', 'hour_start', 'capacity_basis', 'billed_gpu_hours',
                                               'allocated_gpu_hours', 'unallocated_gpu_hours', 'unobserved_gpu_hours']) }},
               cast(null as string)
        from {{ ref('int_gpu_idle_hourly') }}
        where {{ gpu_ledger.in_plan('hour_start', plan) }}
        group by cast(hour_start as date)
        union all
        select cast(hour_start as date), cast(null as string), cast(null as string),
               {{ gpu_ledger.rows_hash_digest(['x_charge_key', 'hour_start', 'pool_id', 'gpu_model', 'team_id',
                                               'workload_id', 'billed_gpu_hours']) }}
        from {{ ref('int_gpu_billing_hours_mapped') }}
        where {{ gpu_ledger.in_plan('hour_start', plan) }}
        group by cast(hour_start as date)
    ) as parts
    where day is not null
    group by day
{%- endmacro %}

{% macro utilisation_changed_days() -%}
    {%- if not execute or not is_incremental() -%}
        {{ return('select cast(null as date)') }}
    {%- endif -%}
    {%- set sql -%}
        select coalesce(current_digests.day, stored.day) as day
        from ({{ gpu_ledger.utilisation_day_digests({'all': true, 'days': []}) }}) as current_digests
        full outer join (select distinct day, x_inputs_digest as digest from {{ this }}) as stored
            on stored.day = current_digests.day
        where stored.digest is distinct from current_digests.digest
    {%- endset -%}
    {{ return(sql) }}
{%- endmacro %}
