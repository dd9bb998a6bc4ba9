-- Cluster nodes and their configured GPUs; the latest landed inventory of a node replaces older ones.
-- scontrol rarely names the cluster (`ClusterName=`, stated_cluster); int_gpu_nodes gives every node
-- its cluster from the jobs that ran on it (docs/cost_model.md, "Physical GPUs").
-- physical_gpu_count: whole GPUs + MIG devices folded to the GPUs they are slices of (the parser).
with source as (
    select * from {{ source('usage', 'gpu_inventory') }}
),

final as (
    select
        nullif(trim(cluster), '') as stated_cluster,
        node,
        lower(nullif(trim(gpu_type), '')) as gpu_type,
        coalesce(gpu_count, 0) as gpu_count,
        coalesce(physical_gpu_count, gpu_count, 0) as physical_gpu_count,
        coalesce(mig_devices, 0) as mig_devices,
        gres_detail,
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
