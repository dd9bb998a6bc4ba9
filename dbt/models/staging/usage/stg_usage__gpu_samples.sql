-- GPU telemetry samples. A row repeated inside one landed file (same time, GPU, MIG instance and pod)
-- is kept once. sampled_at stays NULL when the file carried no time; the landing time is joined in
-- intermediate (staging does no joins). Utilisation is one 0-100 figure: DCGM GR_ENGINE_ACTIVE
-- (ratio, the MIG-aware reading) first, else GPU_UTIL.
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
    qualify row_number() over (
        partition by _file_hash, sampled_at, host, gpu_index, gpu_uuid, mig_instance_id, namespace, pod, container
        order by _loaded_at desc, _source_line
    ) = 1
)

select * from final
