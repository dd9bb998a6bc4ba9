{# Hour buckets an interval [start_at, end_at) touches, one row per bucket start (use in a select list:
   one row per bucket). Empty when the interval has no length. #}
{% macro hour_buckets(start_at, end_at) -%}
    {{ gpu_ledger.explode_list(gpu_ledger.hour_series("date_trunc('hour', " ~ start_at ~ ")", end_at ~ ' - interval 1 microsecond')) }}
{%- endmacro %}

{# Day starts (timestamps) of the UTC days of an interval's hour_buckets, one row per day: from the day of
   start_at to the day of its last instant, none when hour_buckets gives no hour (end_at not after the start
   of start_at's hour; a zero-length interval inside an hour has that hour, so its day). #}
{% macro day_buckets(start_at, end_at) -%}
    {{ gpu_ledger.explode_list(gpu_ledger.day_series(
        "date_trunc('day', " ~ start_at ~ ")",
        "case when " ~ end_at ~ " > date_trunc('hour', " ~ start_at ~ ") then date_trunc('day', " ~ end_at
            ~ " - interval 1 microsecond) else date_trunc('day', " ~ start_at ~ ") - interval 1 day end")) }}
{%- endmacro %}

{# Hours of [start_at, end_at) that fall inside the hour bucket starting at hour_start. #}
{% macro overlap_hours(start_at, end_at, hour_start) -%}
    greatest(
        {{ gpu_ledger.hours_between('greatest(' ~ start_at ~ ', ' ~ hour_start ~ ')',
                                    'least(' ~ end_at ~ ', ' ~ hour_start ~ ' + interval 1 hour)') }},
        0.0)
{%- endmacro %}

{# Share of a physical GPU that a MIG instance holds, from its profile name: '<n>g.<mem>gb' is n
   compute slices of 7 (A100/H100/H200/B200), of 4 on the A30. 1 when the row is a whole GPU. #}
{% macro mig_slice_fraction(profile, gpu_model) -%}
    case
        when {{ profile }} is null then 1.0
        when {{ gpu_ledger.regex_search('lower(' ~ profile ~ ')', "'^[0-9]+g[.]'") }} then
            cast(regexp_extract(lower({{ profile }}), '^([0-9]+)g\.', 1) as double)
            / case when upper(coalesce({{ gpu_model }}, '')) like 'A30%' then 4.0 else 7.0 end
        else 1.0
    end
{%- endmacro %}

{# The one key a host is matched on across sources (scontrol node, sacct NodeList, pod nodeName, DCGM
   Hostname, nvidia-smi host): lower case, short name (the part before the first dot), so
   'GPU-Node-1.cluster.local' and 'gpu-node-1' are one host (an IP address stays whole). #}
{% macro host_key(expr) -%}
    case when {{ gpu_ledger.regex_search('trim(' ~ expr ~ ')', "'^[0-9.:]+$'") }} then trim({{ expr }})
         else lower(split_part(trim({{ expr }}), '.', 1)) end
{%- endmacro %}
