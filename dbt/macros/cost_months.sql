{#- The input stamps and spans of the month-incremental cost models (macros/incremental_months.sql). -#}

{#- int_workload_cost_lines: the usage models incremental by day (unbilled usage priced as GPU work, usage
   and node hours behind idle and owned idle capacity), the ledger's files by the months a line's charge
   period touches (bill lines, their hours, activity days; a FOCUS charge period lies in one billing
   period, so it touches at most two calendar months), the API requests' files. -#}
{% macro cost_lines_stamps(grain='month') -%}
    {{ return([
        gpu_ledger.day_build_stamps(ref('int_gpu_usage_unbilled'), 'day', 'unbilled'),
        gpu_ledger.day_build_stamps(ref('int_gpu_usage_hourly'), 'usage_date', 'usage'),
        gpu_ledger.day_build_stamps(ref('int_gpu_node_hours'), 'day', 'node_hours'),
        gpu_ledger.file_row_stamps(ref('ledger_focus'), 'ChargePeriodStart', 'bill_start', grain=grain),
        gpu_ledger.file_row_stamps(ref('ledger_focus'), 'ChargePeriodEnd - interval 1 microsecond', 'bill_end', grain=grain),
        gpu_ledger.file_row_stamps(ref('int_api_requests_allocated'), 'started_at', 'api', grain=grain),
    ]) }}
{%- endmacro %}

{#- Rows priced in the month they start that read inputs of later months: run records (a run on a bill
   line of the next day) and bill lines (idle share from the usage of their hours). Only those that do
   not end in the month they start can reach another month. -#}
{% macro cost_lines_spans() -%}
    select home_at, start_at, end_at from (
        select ChargePeriodStart as home_at, ChargePeriodStart as start_at, ChargePeriodEnd as end_at
        from {{ ref('ledger_focus') }}
        where x_workload_id is not null
        union all
        select started_at, started_at, ended_at from {{ ref('stg_benchmarks__training_runs') }} where workload_id is not null
        union all
        select started_at, started_at, ended_at from {{ ref('stg_benchmarks__eval_runs') }} where workload_id is not null
        union all
        select started_at, started_at, ended_at from {{ ref('stg_benchmarks__media_batches') }} where workload_id is not null
    ) as spans
    where date_trunc('month', start_at) <> date_trunc('month', end_at - interval 1 microsecond)
{%- endmacro %}

{% macro cost_lines_changed_months() -%}
    {{ gpu_ledger.changed_months(gpu_ledger.cost_lines_stamps(), 'period', gpu_ledger.cost_lines_spans(),
                                 gpu_ledger.cost_lines_stamps('day')) }}
{%- endmacro %}

{#- int_chargeback_lines: the ledger's files by billing period and by the month of the charge (a line's
   idle share is its charge day's), usage and node hours (idle shares, used GPU-hours of the month), the
   API requests' files (the API spend). A bill line is charged in its billing period, and reads the
   idle share of the day its charge starts. -#}
{% macro chargeback_stamps() -%}
    {{ return([
        gpu_ledger.day_build_stamps(ref('int_gpu_usage_hourly'), 'usage_date', 'usage'),
        gpu_ledger.day_build_stamps(ref('int_gpu_node_hours'), 'day', 'node_hours'),
        gpu_ledger.file_row_stamps(ref('ledger_focus'), 'BillingPeriodStart', 'bill_period'),
        gpu_ledger.file_row_stamps(ref('ledger_focus'), 'ChargePeriodStart', 'bill_start'),
        gpu_ledger.file_row_stamps(ref('int_api_requests_allocated'), 'started_at', 'api'),
    ]) }}
{%- endmacro %}

{% macro chargeback_spans() -%}
    select BillingPeriodStart as home_at, ChargePeriodStart as start_at, ChargePeriodEnd as end_at
    from {{ ref('ledger_focus') }}
    where date_trunc('month', BillingPeriodStart) <> date_trunc('month', ChargePeriodStart)
       or date_trunc('month', ChargePeriodStart) <> date_trunc('month', ChargePeriodEnd - interval 1 microsecond)
{%- endmacro %}

{% macro chargeback_changed_months() -%}
    {{ gpu_ledger.changed_months(gpu_ledger.chargeback_stamps(), 'billing_period_start', gpu_ledger.chargeback_spans()) }}
{%- endmacro %}

{#- The columns int_workload_cost_lines keeps for its month-incremental build, which
   fct_workload_cost_lines does not publish. -#}
{% macro cost_lines_build_columns() -%}
    {{ return(['x_inputs_digest', 'x_built_at', 'x_loaded_at', 'x_history_key']) }}
{%- endmacro %}
