-- One row per memory-fit measurement (model x GPU x precision x context x concurrency).
with source as (
    select * from {{ ref('stg_benchmarks__memory_fit_tests') }}
),

final as (
    select
        source.test_id,
        source.model_id,
        coalesce(aliases.gpu_model, source.gpu_model) as gpu_model,
        source.gpu_model_as_written,
        source.gpu_count,
        source.precision,
        source.context_length,
        source.concurrency,
        source.peak_memory_gb,
        source.fragmentation_pct,
        source.oom_count,
        source.safe_margin_pct
    from source
    {{ join_gpu_alias('source.gpu_model_as_written') }}
)

select * from final
