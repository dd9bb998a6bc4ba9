-- Cluster nodes and their configured GPUs; the latest landed inventory of a node replaces older ones.
-- scontrol carries no cluster name: nodes belong to the '(default)' Slurm cluster, as do sacct jobs
-- without a Cluster column.
with source as (
    select * from {{ source('usage', 'gpu_inventory') }}
),

final as (
    select
        '(default)' as cluster,
        node,
        lower(nullif(trim(gpu_type), '')) as gpu_type,
        coalesce(gpu_count, 0) as gpu_count,
        cpu_count,
        mem_mib,
        _loaded_at as x_loaded_at,
        _source_file as x_source_file,
        _source_line as x_source_line
    from source
    where node is not null
    qualify row_number() over (partition by node order by _loaded_at desc, _source_line desc) = 1
)

select * from final
