-- GPU telemetry samples, one row per (file, time, GPU series, pod). No dedupe here (a window over
-- every sample was the biggest per-row cost of int_gpu_telemetry_hourly: 11.8 -> 0.8 s at 256 GPUs
-- x 30 days), because raw.gpu_samples holds no in-file repeats: every parser that writes it
-- (dcgm_csv, dcgm_prometheus, nvidia_gpu_exporter, nvidia_smi_query_gpu) passes its rows through
-- sources/usage/_series.py series_findings, which drops repeats of (host, gpu_uuid, gpu_index,
-- mig_instance_id, time, pod) -- rows without a time count as one instant -- keeping the first line;
-- and warehouse/raw.py replace_file* deletes a file's rows before loading it again. That key is
-- coarser than (file, time, host, GPU, MIG, namespace, pod, container), the former dedupe's, so it
-- implies it; tests/sources/test_gpu_samples_unique.py and tests/dbt/test_gpu_samples_unique.py check it.
-- sampled_at stays NULL when the file carried no time; the landing time is joined in intermediate
-- (staging does no joins). Utilisation is one 0-100 figure: DCGM GR_ENGINE_ACTIVE (ratio, the
-- MIG-aware reading) first, else GPU_UTIL.
with source as (
    select * from {{ source('usage', 'gpu_samples') }}
),

final as (
    select
        sampled_at,
        nullif(trim(host), '') as host,
        gpu_index,
        gpu_uuid,
        nullif(trim(gpu_model), '') as gpu_model_reported,
        mig_enabled,
        nullif(trim(mig_profile), '') as mig_profile,
        nullif(trim(mig_instance_id), '') as mig_instance_id,
        gpu_util_pct,
        gr_engine_active,
        sm_active,
        coalesce(gr_engine_active * 100.0, gpu_util_pct) as util_pct,
        fb_used_mib,
        fb_total_mib,
        power_w,
        energy_mj,
        nullif(trim(namespace), '') as namespace,
        nullif(trim(pod), '') as pod,
        nullif(trim(container), '') as container,
        nullif(trim(job_id), '') as job_id,
        source_format,
        _file_hash as x_file_hash,
        _source_file as x_source_file,
        _source_line as x_source_line
    from source
    where gpu_uuid is not null
)

select * from final
