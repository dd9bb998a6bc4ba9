-- Scheduler jobs (Slurm) and Kubernetes allocations (OpenCost). A job exported again in a later
-- accounting file (its final state) replaces the earlier row; OpenCost allocations are keyed by
-- their window start as the same aggregate name recurs every window.
with source as (
    select * from {{ source('usage', 'gpu_jobs') }}
),

keyed as (
    select
        scheduler || ':' || coalesce(cluster, '(default)') || ':' || job_id
            || case when scheduler = 'kubernetes' then '@' || coalesce({{ ts_text('started_at') }}, '') else '' end
            as job_key,
        *
    from source
    where job_id is not null
),

final as (
    select
        job_key,
        scheduler,
        coalesce(cluster, '(default)') as cluster,
        job_id,
        array_job_id,
        job_name,
        user_name,
        nullif(trim(account), '') as account,
        nullif(trim(partition), '') as partition,
        nullif(trim(namespace), '') as namespace,
        pod,
        labels,
        nullif(trim(comment), '') as comment,
        upper(state) as state,
        state_raw,
        submitted_at,
        started_at,
        ended_at,
        elapsed_s,
        gpu_count,
        lower(nullif(trim(gpu_type), '')) as gpu_type,
        lower(nullif(trim(mig_profile), '')) as mig_profile,
        gpu_share,
        gpu_memory_share,
        gpu_hours,
        gpu_util_pct,
        gpu_mem_max_mib,
        n_cpus,
        nullif(trim(node_list), '') as node_list,
        n_nodes,
        exit_code,
        source_format,
        _file_hash as x_file_hash,
        _source_file as x_source_file,
        _source_line as x_source_line
    from keyed
    qualify row_number() over (partition by job_key order by _loaded_at desc, _source_line desc) = 1
)

select * from final
