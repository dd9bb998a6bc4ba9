-- Per-request rows of runs that kept them (vLLM full results, LLMPerf individual files, guidellm
-- samples); one row per run and request index (a file landed twice keeps its latest load).
with source as (
    select * from {{ source('benchmarks', 'benchmark_requests') }}
),

deduplicated as (
    select *
    from source
    qualify row_number() over (
        partition by run_id, request_index order by _loaded_at desc, _file_hash
    ) = 1
),

final as (
    select
        run_id,
        request_index,
        coalesce(succeeded, false) as succeeded,
        error,
        input_tokens,
        output_tokens,
        ttft_ms,
        tpot_ms,
        itl_ms_mean,
        itl_ms_max,
        e2el_ms,
        _file_hash as x_file_hash,
        _source_file as x_source_file,
        _source_line as x_source_line
    from deduplicated
)

select * from final
