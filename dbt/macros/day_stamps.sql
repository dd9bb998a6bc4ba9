{#- Incremental by UTC day on input *stamps* (the day analogue of macros/incremental_months.sql), for a model
   whose rows of a day are joined from several inputs' rows of that day (int_gpu_idle_hourly) or of the
   days its bill lines run on (int_gpu_idle_by_workload). Deciding what changed reads two or three narrow
   columns of each input, never its rows joined:
     - an input incremental by day rewrites a day whole with one build stamp (day_build_stamps);
     - an input rebuilt from landed files keeps each row's file hash: each file with its number of rows
       on the day (file_row_stamps at grain 'day'), so a new, late or restated file changes the days it gives rows
       to or takes rows from.
   The model stores on every row of a day `x_inputs_digest`, an md5 over the day's stamps
   (month_stamp_digests at grain 'day'); a run rebuilds the days whose digest is not the stored one
   (months_with_changed_digest at grain 'day') (new, changed, and stored days no input stamps any more),
   every day when its history key changed (history_days, macros/incremental_days.sql). -#}

{#- int_gpu_idle_hourly: a day's rows join the usage, node hours and GPU bill hours of that day. -#}
{% macro idle_hourly_stamps() -%}
    {{ return([
        gpu_ledger.day_build_stamps(ref('int_gpu_usage_hourly'), 'usage_date', 'usage'),
        gpu_ledger.day_build_stamps(ref('int_gpu_node_hours'), 'day', 'node_hours'),
        gpu_ledger.file_row_stamps(ref('int_gpu_billing_hours_mapped'), 'hour_start', 'bill', grain='day'),
    ]) }}
{%- endmacro %}

{% macro idle_hourly_changed_days() -%}
    {%- if not execute or not is_incremental() -%}
        {{ return('select cast(null as date)') }}
    {%- endif -%}
    {{ return(gpu_ledger.months_with_changed_digest(gpu_ledger.idle_hourly_stamps(), 'day', grain='day')) }}
{%- endmacro %}

{#- int_gpu_idle_by_workload: a row of a bill line start day reads the usage and GPU bill hours of every
   day the lines starting that day run on (a monthly line: its month). Its digest is over the stamps of
   those days (the lines' spans: start day, last day). -#}
{% macro idle_by_workload_stamps() -%}
    {{ return([
        gpu_ledger.day_build_stamps(ref('int_gpu_usage_hourly'), 'usage_date', 'usage'),
        gpu_ledger.file_row_stamps(ref('int_gpu_billing_hours_mapped'), 'hour_start', 'bill', grain='day'),
    ]) }}
{%- endmacro %}

{#- The UTC days the GPU bill lines of a workload run on, per start day (int_gpu_billing_hours_mapped's lines:
   their hours are the buckets the charge period overlaps, so from its start's day to its end's). -#}
{% macro idle_line_spans() -%}
    select distinct cast(ChargePeriodStart as date) as start_day,
           cast(ChargePeriodEnd - interval 1 microsecond as date) as last_day
    from {{ ref('ledger_focus') }}
    where x_workload_id is not null and ChargeCategory = 'Usage'
      and x_gpu_model is not null and x_gpu_hours is not null and ChargePeriodEnd > ChargePeriodStart
{%- endmacro %}

{#- Per start day of `spans_sql` (start_day, last_day): md5 over the stamps of every day its lines run on. -#}
{% macro span_stamp_digests(stamps, spans_sql) -%}
    select spans.start_day as day, md5({{ gpu_ledger.sorted_distinct_join('day_stamps.stamp', ',') }}) as digest
    from ({{ spans_sql }}) as spans
    inner join (
        select cast(all_stamps.month_at as date) as day, all_stamps.stamp
        from (
            {%- for s in stamps %}
            {{ s }}
            {{ 'union all' if not loop.last }}
            {%- endfor %}
        ) as all_stamps
    ) as day_stamps
        on day_stamps.day >= spans.start_day and day_stamps.day <= spans.last_day
    group by spans.start_day
{%- endmacro %}

{% macro idle_by_workload_changed_days() -%}
    {%- if not execute or not is_incremental() -%}
        {{ return('select cast(null as date)') }}
    {%- endif -%}
    {%- set sql -%}
        select coalesce(current_digests.day, stored.day) as day
        from ({{ gpu_ledger.span_stamp_digests(gpu_ledger.idle_by_workload_stamps(), gpu_ledger.idle_line_spans()) }}) as current_digests
        full outer join (select distinct day, x_inputs_digest as digest from {{ this }}) as stored
            on stored.day = current_digests.day
        where stored.digest is distinct from current_digests.digest
    {%- endset -%}
    {{ return(sql) }}
{%- endmacro %}

{#- The plan of the days the lines starting on a day of `plan` run on (every day for a full plan). -#}
{% macro span_days_plan(plan, spans_sql) -%}
    {%- if plan['all'] or not execute -%}
        {{ return(plan) }}
    {%- endif -%}
    {%- set days = [] -%}
    {%- for d in plan['days'] -%}
        {%- do days.append(d) -%}
    {%- endfor -%}
    {%- if plan['days'] -%}
        {%- set sql -%}
            select cast(start_day as string), cast(last_day as string) from ({{ spans_sql }}) as spans
            where {{ gpu_ledger.in_days('spans.start_day', plan['days']) }}
        {%- endset -%}
        {%- for row in run_query(sql).rows -%}
            {%- set first = modules.datetime.datetime.strptime(row[0][:10], '%Y-%m-%d').date() -%}
            {%- set last = modules.datetime.datetime.strptime(row[1][:10], '%Y-%m-%d').date() -%}
            {%- for i in range((last - first).days + 1) -%}
                {%- do days.append((first + modules.datetime.timedelta(days=i)).isoformat()) -%}
            {%- endfor -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return({'all': false, 'days': days | unique | sort | list}) }}
{%- endmacro %}
