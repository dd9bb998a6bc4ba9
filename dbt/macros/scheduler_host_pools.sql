{# Each scheduler host's pool over all history: the pool (scheduler:cluster) with most job-hours on the
   host, ties by pool id (docs/cost_model.md, "Physical GPUs"). `jobs`: int_gpu_jobs_attributed rows
   with GPUs and a positive length. A job-hour is an hour bucket the job touches on the node (as
   hour_buckets makes them), counted here without expanding the buckets, so an incremental model can
   afford it over every job of the history. Grain: node_key. #}
{% macro scheduler_host_pools(jobs) -%}
    select node_key, pool_id
    from (
        select node_key, pool_id,
               row_number() over (partition by node_key order by job_hours desc, pool_id) as pool_rank
        from (
            select {{ host_key('n.node') }} as node_key, j.scheduler || ':' || j.cluster as pool_id,
                   sum(floor(cast({{ epoch_us('j.ended_at_effective') }} - 1
                                  - {{ epoch_us("date_trunc('hour', j.started_at)") }} as double) / 3600000000.0) + 1)
                       as job_hours
            from {{ jobs }} as j, {{ lateral_explode('j.nodes') }} as n(node)
            where n.node is not null
            group by {{ host_key('n.node') }}, j.scheduler || ':' || j.cluster
        ) as counted
        where node_key is not null
    ) as ranked
    where pool_rank = 1
{%- endmacro %}
