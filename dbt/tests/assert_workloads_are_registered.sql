-- Catches a run, usage label or cost line naming a workload the registry does not list (a new workload whose
-- registry entry has not landed, a typo, an entry rejected for a missing id): its rows still publish, with
-- the team found for them (else '(unallocated)'), but nothing classifies the workload (type, unit of
-- success), so its unit cost cannot be compared. A warning naming each such workload, the mart and the rows,
-- never a publication withheld for every source. Lists what the registry should add.
{{ config(severity='warn', meta={'title': 'Workloads not in the registry', 'counts': 'workload-marts', 'dagster': {'ref': {'name': 'fct_workload_unit_cost'}}}) }}
{%- set marts = ['fct_workload_unit_cost', 'fct_workload_cost_lines', 'fct_gpu_utilisation_daily', 'fct_off_bill_usage',
                 'fct_benchmark_runs', 'fct_training_runs', 'fct_eval_runs', 'fct_media_batches',
                 'fct_quality_outcomes_daily'] %}
with named as (
    {%- for mart in marts %}
    select '{{ mart }}' as mart, workload_id, count(*) as rows_named
    from {{ ref(mart) }}
    where workload_id is not null
    group by workload_id
    {%- if not loop.last %}
    union all
    {%- endif %}
    {%- endfor %}
)

select named.workload_id, named.mart, named.rows_named
from named
where not exists (
    select 1 from {{ ref('stg_registry__workloads') }} as registered where registered.workload_id = named.workload_id
)
