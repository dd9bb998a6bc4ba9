-- Catches: an all-in cost that is not the sum of its components (a component dropped or counted
-- twice when the pivot changes). Every published unit-cost row must satisfy the identity.
{{ config(meta={'dagster': {'ref': {'name': 'fct_workload_unit_cost'}}}) }}

select *
from {{ ref('fct_workload_unit_cost') }}
where all_in_cost <> gpu_compute + api_usage + storage + network + checkpointing + serving_stack + observability
    + platform_labor + idle_capacity + retry_waste + failure_waste + queue_overhead
    + moderation_or_quality_filtering + operator_review
