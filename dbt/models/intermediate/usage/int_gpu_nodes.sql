-- Scheduler nodes with GPUs, each in one pool (docs/cost_model.md, "Physical GPUs"). Grain: node.
-- Cluster naming, one rule for scontrol and sacct: an explicit ClusterName= on the node line; else the
-- cluster of the sacct jobs that ran on the node (most jobs, ties by name); else the one cluster the
-- jobs name when they name exactly one; else '(default)', the cluster of sacct jobs without a Cluster
-- column. Before, scontrol nodes were always '(default)', so a dump with a Cluster column left the
-- jobs' pool without capacity.
-- physical_gpus: whole GPUs + MIG devices folded to the GPUs they are slices of (four devices
-- 3g+2g+1g+1g on one H100 are one GPU, not four).
with inventory as (
    select * from {{ ref('stg_usage__gpu_inventory') }}
    where physical_gpu_count > 0
),

jobs as (
    select * from {{ ref('int_gpu_jobs_attributed') }}
    where scheduler = 'slurm'
),

job_node_clusters as (
    select {{ host_key('n.node') }} as node_key, jobs.cluster, count(*) as jobs
    from jobs, {{ lateral_explode('jobs.nodes') }} as n(node)
    group by all
),

node_cluster as (
    select node_key, cluster
    from job_node_clusters
    qualify row_number() over (partition by node_key order by jobs desc, cluster) = 1
),

job_clusters as (
    select case when count(distinct cluster) = 1 then min(cluster) end as only_cluster
    from jobs
),

final as (
    select
        inventory.node,
        {{ host_key('inventory.node') }} as node_key,
        coalesce(inventory.stated_cluster, node_cluster.cluster, job_clusters.only_cluster, '(default)') as cluster,
        'slurm:' || coalesce(inventory.stated_cluster, node_cluster.cluster, job_clusters.only_cluster, '(default)')
            as pool_id,
        case
            when inventory.stated_cluster is not null then 'ClusterName on the node line'
            when node_cluster.cluster is not null then 'cluster of the jobs that ran on the node'
            when job_clusters.only_cluster is not null then 'the one cluster the jobs name'
            else 'no cluster named: (default)'
        end as cluster_basis,
        inventory.gpu_type,
        coalesce(aliases.gpu_model, {{ canonical_gpu_model('inventory.gpu_type') }}, '(unknown)') as gpu_model,
        inventory.gpu_count as gpu_devices,
        inventory.mig_devices,
        inventory.physical_gpu_count as physical_gpus,
        inventory.gres_detail,
        inventory.x_source_file
    from inventory
    cross join job_clusters
    left join node_cluster on node_cluster.node_key = {{ host_key('inventory.node') }}
    {{ join_gpu_alias("split_part(inventory.gpu_type, ',', 1)") }}
)

select * from final
