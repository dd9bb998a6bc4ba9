-- One row per workload and day of the quality-filter export: produced vs accepted items.
with source as (
    select * from {{ ref('stg_benchmarks__quality_outcomes') }}
),

final as (
    select
        workload_id,
        day,
        produced,
        accepted,
        rejected_quality,
        rejected_safety,
        produced - accepted - coalesce(rejected_quality, 0) - coalesce(rejected_safety, 0) as unexplained_rejections,
        case when produced > 0 then accepted / produced end as accepted_ratio,
        filter_name
    from source
)

select * from final
