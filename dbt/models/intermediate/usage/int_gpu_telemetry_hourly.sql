{{ config(
    materialized='incremental',
    incremental_strategy=gpu_ledger.day_incremental_strategy(),
    partition_by=gpu_ledger.day_partition_by('sample_date'),
    unique_key='sample_date',
    on_schema_change='append_new_columns',
    pre_hook=[{"sql": "{{ gpu_ledger.clear_when_history_changed(ref('int_gpu_telemetry_hourly_history_key'), [('x_built_at', 'timestamp')]) }}", "transaction": false}]
) }}
-- GPU telemetry per GPU (or MIG instance) x UTC hour: the 1-minute samples folded to the hour, so
-- int_gpu_usage_hourly never reads the biggest raw table. Grain: gpu_uuid x mig_instance_id x hour_start.
-- A sample's time is its own, else its file's landing time (bare nvidia-smi CSVs carry none).
-- Incremental by UTC day (macros/incremental_days.sql): a run rebuilds only the days that hold rows of
-- files loaded since the last build (new days, late or restated files) and the CLI backfill window;
-- every day when this SQL, the staging SQL upstream or a macro they call changed
-- (int_gpu_telemetry_hourly_history_key, stored on the rows as x_history_key: a table built before it
-- stored the key also rebuilds in full, once).
-- Labels and names are min() (deterministic; one value per GPU-hour in practice); no registry or
-- seed lookups here, so mapping changes reach history without a rebuild of this model.
{%- if is_incremental() %}
    {#- The files loaded since the last build, by hash, named in the raw scan: each landed file is its own
        Parquet file (row groups of one hash), so the scan reads theirs only. A bound on the raw rows'
        _loaded_at with a day of margin (they are stamped before the audit row) read every sample of a
        history loaded within the day before (a backfill, a benchmark's base): 2.6 against 0.1 CPU s at
        256 GPUs x 365 days. -#}
    {%- set new_hashes = [] %}
    {%- if execute %}
        {%- for row in run_query(files_loaded_since_last_build()).rows %}{% do new_hashes.append(row[0]) %}{% endfor %}
    {%- endif %}
    {%- set changed_days_sql %}
        {%- if new_hashes %}
        with new_files as ({{ files_loaded_since_last_build() }})
        select distinct cast(coalesce(s.sampled_at, new_files.observed_at) as date)
        from {{ source('usage', 'gpu_samples') }} as s
        inner join new_files on new_files.file_hash = s._file_hash
        where s._file_hash in ({% for h in new_hashes %}'{{ h }}'{{ ', ' if not loop.last }}{% endfor %})
          and s.gpu_uuid is not null
        {%- else %}
        select cast(null as date)
        {%- endif %}
    {%- endset %}
    {%- set plan = history_days(changed_days_sql, ref('int_gpu_telemetry_hourly_history_key')) %}
    {#- Rows without a time of their own land on their file's landing day (file_loads below): only files
        landed on a rebuilt day can add any. Naming them keeps `sampled_at is null` out of the scan when
        there are none (an OR with IS NULL is not pushed into the Parquet scan: every sample of the
        history was read, 0.28 against 0.07 CPU s at 256 GPUs x 90 days). -#}
    {%- set timeless_files = [] %}
    {%- if execute and not plan['all'] %}
        {%- set landed_sql %}
            select file_hash from {{ ref('stg_audit__file_loads') }}
            group by file_hash
            having {{ in_days('min(observed_at)', plan['days']) }}
        {%- endset %}
        {%- for row in run_query(landed_sql).rows %}{% do timeless_files.append(row[0]) %}{% endfor %}
    {%- endif %}
{%- else %}
    {%- set plan = {'all': true, 'days': []} %}
{%- endif %}

with samples as (
    select * from {{ ref('stg_usage__gpu_samples') }}
    {%- if not plan['all'] %}
    -- pushed into the raw scan; rows without a time of their own are placed by the join below
    where {{ in_days('sampled_at', plan['days']) }}
    {%- if timeless_files %}
       or (sampled_at is null and x_file_hash in ({% for h in timeless_files %}'{{ h }}'{{ ', ' if not loop.last }}{% endfor %}))
    {%- endif %}
    {%- endif %}
),

file_loads as (
    select file_hash, min(observed_at) as observed_at, max(loaded_at) as loaded_at
    from {{ ref('stg_audit__file_loads') }}
    group by file_hash
),

sample_times as (
    select
        samples.*,
        coalesce(samples.sampled_at, file_loads.observed_at) as sample_time,
        samples.sampled_at is null as time_from_landing,
        file_loads.loaded_at as file_loaded_at
    from samples
    left join file_loads on file_loads.file_hash = samples.x_file_hash
),

final as (
    select
        gpu_uuid,
        mig_instance_id,
        date_trunc('hour', sample_time) as hour_start,
        -- the hour's day, from the group's key: a second key (the sample's day) made every one of the
        -- samples hash one more column (at 1,000 GPUs x 30 days, 43M samples: 6.7-7.3 -> 6.3-6.9 s)
        cast(date_trunc('hour', sample_time) as date) as sample_date,
        min(host) as host,
        -- The GPU's index on its host (DCGM `gpu`, nvidia-smi `index`): with the host, the key that makes a
        -- telemetry GPU and a scontrol node's GPU one physical GPU (dim_physical_gpu).
        min(gpu_index) as gpu_index,
        min(gpu_model_reported) as gpu_model_reported,
        min(mig_profile) as mig_profile,
        min(namespace) as namespace,
        min(pod) as pod,
        min(job_id) as job_id,
        avg(util_pct) as util_pct,
        avg(fb_used_mib) as memory_used_mib,
        count(*) as sample_count,
        count(*) filter (where pod is not null or namespace is not null or job_id is not null) as labelled_samples,
        count(*) filter (where pod is not null or namespace is not null or job_id is not null or util_pct > 0)
            as busy_samples,
        bool_or(time_from_landing) as time_from_landing,
        max(file_loaded_at) as x_loaded_at
    from sample_times
    where sample_time is not null
    {%- if not plan['all'] %}
        and {{ in_days('sample_time', plan['days']) }}
    {%- endif %}
    group by gpu_uuid, mig_instance_id, date_trunc('hour', sample_time)
)

select
    final.*,
    -- when this build ran (a day is always rewritten whole) and the key it was built with (history_days)
    cast({{ dbt.current_timestamp() }} as timestamp) as x_built_at,
    (select max(x_history_key) from {{ ref('int_gpu_telemetry_hourly_history_key') }}) as x_history_key,
    -- The one row of its GPU and hour (the GPU's own row, else its first MIG instance): counting these counts
    -- each GPU-hour once, so dim_physical_gpu needs no distinct count over every hour of the history (0.35 ->
    -- 0.16 s at 256 GPUs x 365 days). An hour is inside one day, so a rebuilt day recomputes its own flags.
    row_number() over (partition by final.gpu_uuid, final.hour_start
                       order by final.mig_instance_id nulls first) = 1 as x_first_of_gpu_hour
from final
