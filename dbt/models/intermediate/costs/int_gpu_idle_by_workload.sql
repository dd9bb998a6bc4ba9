{{ config(
    materialized='incremental',
    incremental_strategy=gpu_ledger.day_incremental_strategy(),
    partition_by=gpu_ledger.day_partition_by('day'),
    unique_key='day',
    on_schema_change='append_new_columns',
    pre_hook=[
        {"sql": "{{ gpu_ledger.clear_when_history_changed(ref('int_gpu_idle_by_workload_history_key'), [('x_inputs_digest', 'string'), ('x_built_at', 'timestamp')]) }}", "transaction": false},
        {"sql": "{{ gpu_ledger.clear_days('day', gpu_ledger.idle_by_workload_changed_days()) }}", "transaction": false}
    ]
) }}
-- Idle share of the GPU time a workload is billed for, per workload and bill-line start day, computed
-- hour by hour over the whole period of each GPU bill line tagged to the workload (a monthly line is
-- spread over its hours, not put on its start day). Grain: workload_id x day, where day is the
-- ChargePeriodStart date of the lines (the key int_workload_cost_lines and int_chargeback_lines join on):
-- idle_share = idle GPU-hours / billed GPU-hours of the lines that start that day.
-- Per workload x GPU model x hour (one fleet: usage on the lines' hosts, else usage of the workload):
--   unallocated = billed - allocated (billed, no job, pod or serving process);
--   underused   = allocated hours with a reading x (1 - activity);
--   unmeasured  = allocated hours with no utilisation reading;
--   unobserved  = billed hours with no usage record at all (no collector): never idle, never busy.
-- The policy idle_capacity_basis says which kind is priced as idle_capacity: 'unallocated' (default:
-- capacity billed that nothing held; a GPU the workload holds is its compute, however busy) or
-- 'unallocated_and_underused'. idle_share is null when every hour of the lines is unobserved.
-- Incremental by start day (macros/day_stamps.sql): a day's rows read the usage and GPU bill hours of the
-- days its lines run on. A run rebuilds the start days whose digest over those days' input stamps changed
-- (usage days int_gpu_usage_hourly rebuilt, GPU bill files per day of their hours: a new, late or restated
-- line changes every start day whose lines share a day with it), reading only the days their lines run on;
-- a start day no line holds any more is deleted (pre-hook clear_days). Every day when
-- int_gpu_idle_by_workload_history_key changed (registry files, the SQL and seeds upstream).
{%- if is_incremental() %}
    {%- set plan = history_days(gpu_ledger.idle_by_workload_changed_days(), ref('int_gpu_idle_by_workload_history_key')) %}
{%- else %}
    {%- set plan = {'all': true, 'days': []} %}
{%- endif %}
{%- set hours_plan = span_days_plan(plan, idle_line_spans()) %}
with policies as (
    select * from {{ ref('int_cost_policies') }}
),

-- the hours of the days the rebuilt start days' lines run on: every line's, since a workload-hour's
-- buckets are spread over all its lines in the hour
billing as (
    select * from {{ ref('int_gpu_billing_hours_mapped') }}
    where workload_id is not null and {{ in_plan('hour_start', hours_plan) }}
),

line_starts as (
    select x_charge_key, cast(ChargePeriodStart as date) as day
    from {{ ref('ledger_focus') }}
    where x_workload_id is not null and {{ in_plan('ChargePeriodStart', plan) }}
),

usage as (
    -- A usage row on a bill line's host belongs to that line's workload (the fleet identity).
    select
        coalesce(bill_lines.workload_id, usage.workload_id) as workload_id,
        coalesce(usage.gpu_model, '(unknown)') as gpu_model,
        usage.hour_start,
        usage.allocated_gpu_hours,
        usage.measured_gpu_hours,
        usage.used_gpu_hours
    from {{ ref('int_gpu_usage_hourly') }} as usage
    left join (select distinct x_charge_key, workload_id from billing) as bill_lines
        on bill_lines.x_charge_key = usage.bill_charge_key
    where {{ in_plan('usage.hour_start', hours_plan) }}
),

usage_hours as (
    select workload_id, gpu_model, hour_start,
           sum(allocated_gpu_hours) as allocated_gpu_hours,
           sum(measured_gpu_hours) as measured_gpu_hours,
           sum(used_gpu_hours) as used_gpu_hours
    from usage
    where workload_id is not null
    group by all
),

billed_hours as (
    select workload_id, gpu_model, hour_start,
           cast(round(sum(billed_gpu_hours), 9) as decimal(38, 9)) as billed_gpu_hours
    from billing
    group by all
),

hourly as (
    select
        billed_hours.workload_id,
        billed_hours.gpu_model,
        billed_hours.hour_start,
        billed_hours.billed_gpu_hours,
        usage_hours.hour_start is not null as has_usage,
        coalesce(usage_hours.used_gpu_hours, 0) as used_gpu_hours,
        case when usage_hours.hour_start is null then cast(0 as decimal(38, 9))
             else greatest(billed_hours.billed_gpu_hours - usage_hours.allocated_gpu_hours, 0) end
            as unallocated_gpu_hours,
        case when usage_hours.hour_start is null then cast(0 as decimal(38, 9))
             else greatest(usage_hours.measured_gpu_hours - usage_hours.used_gpu_hours, 0) end
            as underused_gpu_hours,
        case when usage_hours.hour_start is null then cast(0 as decimal(38, 9))
             else greatest(usage_hours.allocated_gpu_hours - usage_hours.measured_gpu_hours, 0) end
            as unmeasured_gpu_hours,
        case when usage_hours.hour_start is null then billed_hours.billed_gpu_hours
             else cast(0 as decimal(38, 9)) end as unobserved_gpu_hours,
        coalesce(usage_hours.allocated_gpu_hours, 0) > billed_hours.billed_gpu_hours as over_allocated
    from billed_hours
    left join usage_hours
        on usage_hours.workload_id = billed_hours.workload_id
        and usage_hours.gpu_model = billed_hours.gpu_model
        and usage_hours.hour_start = billed_hours.hour_start
),

-- Each line's hours carry the workload-hour's buckets in proportion to the line's billed GPU-hours.
line_hours as (
    select
        line_starts.day,
        billing.workload_id,
        billing.x_charge_key,
        billing.billed_gpu_hours as line_gpu_hours,
        hourly.billed_gpu_hours as hour_gpu_hours,
        hourly.has_usage,
        hourly.over_allocated,
        hourly.used_gpu_hours,
        hourly.unallocated_gpu_hours,
        hourly.underused_gpu_hours,
        hourly.unmeasured_gpu_hours,
        hourly.unobserved_gpu_hours,
        hourly.unallocated_gpu_hours
            + case when policies.idle_capacity_basis = 'unallocated_and_underused'
                   then hourly.underused_gpu_hours else 0 end as priced_idle_gpu_hours
    from billing
    inner join line_starts on line_starts.x_charge_key = billing.x_charge_key
    inner join hourly
        on hourly.workload_id = billing.workload_id
        and hourly.gpu_model = billing.gpu_model
        and hourly.hour_start = billing.hour_start
    cross join policies
),

daily as (
    select
        workload_id,
        day,
        {% for c in ['used', 'unallocated', 'underused', 'unmeasured', 'unobserved', 'priced_idle'] -%}
        cast(round(sum(cast({{ c }}_gpu_hours as double) * line_gpu_hours / nullif(hour_gpu_hours, 0)), 9)
             as decimal(38, 9)) as {{ c }}_gpu_hours,
        {% endfor -%}
        cast(round(sum(line_gpu_hours), 9) as decimal(38, 9)) as billed_gpu_hours,
        bool_or(has_usage) as has_usage,
        bool_or(over_allocated) as over_allocated
    from line_hours
    group by workload_id, day
),

final as (
    select
        workload_id,
        day,
        billed_gpu_hours,
        case when has_usage then used_gpu_hours end as used_gpu_hours,
        unallocated_gpu_hours,
        underused_gpu_hours,
        unmeasured_gpu_hours,
        unobserved_gpu_hours,
        priced_idle_gpu_hours as idle_gpu_hours,
        case when has_usage
             then cast(round(cast(priced_idle_gpu_hours as double) / nullif(cast(billed_gpu_hours as double), 0), 12)
                       as decimal(18, 12)) end as idle_share,
        case when over_allocated then 'allocated exceeds billed in some hours: idle set to 0 there' end as idle_flag
    from daily
),

day_digests as (
    {{ span_stamp_digests(idle_by_workload_stamps(),
                          'select * from (' ~ idle_line_spans() ~ ') as spans where ' ~ in_plan('spans.start_day', plan)) }}
)

select
    final.*,
    day_digests.digest as x_inputs_digest,
    {{ latest_file_load() }} as x_loaded_at,
    cast({{ dbt.current_timestamp() }} as timestamp) as x_built_at,
    (select max(x_history_key) from {{ ref('int_gpu_idle_by_workload_history_key') }}) as x_history_key
from final
left join day_digests on day_digests.day = final.day
