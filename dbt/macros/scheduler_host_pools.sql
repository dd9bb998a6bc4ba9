{# Each scheduler host's pool over all history: the pool (scheduler:cluster) with most job-hours on the
   host, ties by pool id (docs/cost_model.md, "Physical GPUs"). `jobs`: int_gpu_jobs_attributed rows
   with GPUs and a positive length. A job-hour is an hour bucket the job touches on the node (as
   hour_buckets makes them), counted here without expanding the buckets, so an incremental model can
   afford it over every job of the history. The nodes are exploded in the select list: DuckDB runs a
   lateral `from jobs, unnest(jobs.nodes)` as a correlated join, 1.30 against 0.14 CPU s over the 216k
   jobs of a 365-day fleet-256 history (1 thread, same pools). Grain: node_key. #}
{% macro scheduler_host_pools(jobs) -%}
    select node_key, pool_id
    from (
        select node_key, pool_id,
               row_number() over (partition by node_key order by job_hours desc, pool_id) as pool_rank
        from (
            select {{ host_key('n.node') }} as node_key, n.scheduler || ':' || n.cluster as pool_id,
                   sum(floor(cast({{ epoch_us('n.ended_at_effective') }} - 1
                                  - {{ epoch_us("date_trunc('hour', n.started_at)") }} as double) / 3600000000.0) + 1)
                       as job_hours
            from (
                select {{ explode_list('j.nodes') }} as node, j.scheduler, j.cluster, j.started_at, j.ended_at_effective
                from {{ jobs }} as j
            ) as n
            where n.node is not null
            group by {{ host_key('n.node') }}, n.scheduler || ':' || n.cluster
        ) as counted
        where node_key is not null
    ) as ranked
    where pool_rank = 1
{%- endmacro %}
