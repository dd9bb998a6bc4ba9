-- One row: x_history_key, a digest of what the usage chain applies across all history. An incremental
-- model that stores it (int_gpu_usage_hourly) rebuilds every day when it differs (macro history_days),
-- else only the days new or restated files touch. Parts, each a rule whose change can move rows of
-- any day:
--   registry files (namespace and host mappings, teams, workloads, cost policies), by content hash;
--   the gpu_aliases and mig_profiles seeds (GPU model names, MIG fractions);
--   the scontrol inventory (a node's GPUs, model and cluster; a job's GPU model from its node);
--   the code of the usage models and of everything upstream of them: their SQL, the models and seeds
--   they read (staging of jobs, samples and inventory, the registry models, the GPU bill chain,
--   ledger_focus, the benchmark runs; instance_gpu_map) and the macros all of these call
--   (macros/incremental_export_days.sql upstream_code_digest). A changed rule anywhere upstream can
--   move rows of any day: it rebuilds the history it applies to.
{%- set usage_models = [] %}
{%- if execute %}
    {%- for node in graph.nodes.values() | sort(attribute='unique_id') %}
        {%- if node.resource_type == 'model' and 'models/intermediate/usage/' in node.original_file_path %}
            {%- do usage_models.append(node.unique_id) %}
        {%- endif %}
    {%- endfor %}
{%- endif %}
with registry_files as (
    select {{ sorted_distinct_join('file_hash', ',') }} as part
    from {{ ref('stg_audit__file_loads') }}
    where family = 'registry'
),

gpu_aliases as (
    {{ gpu_alias_digest() }}
),

mig_profiles as (
    select {{ sorted_distinct_join(row_text('m'), '|') }} as part from {{ ref('mig_profiles') }} as m
),

inventory as (
    {{ inventory_digest() }}
),

nodes as (
    select {{ sorted_distinct_join("concat_ws('/', node_key, pool_id, gpu_model, "
                                   ~ "coalesce(cast(physical_gpus as string), '~'))", '|') }} as part
    from {{ ref('int_gpu_nodes') }}
)

select md5(concat_ws('#',
    coalesce(registry_files.part, ''), coalesce(gpu_aliases.part, ''), coalesce(mig_profiles.part, ''),
    coalesce(inventory.part, ''), coalesce(nodes.part, ''),
    '{{ upstream_code_digest(usage_models) }}')) as x_history_key
from registry_files
cross join gpu_aliases
cross join mig_profiles
cross join inventory
cross join nodes
