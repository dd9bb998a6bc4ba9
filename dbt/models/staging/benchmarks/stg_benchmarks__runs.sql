-- Benchmark runs, one row per run_id. A vLLM full result and its stripped summary-only copy share
-- a run_id: the copy with per-request data wins, then the latest load. result_file_stem is taken
-- from the original file name (_source_file): the landed copy is named by its content hash, so
-- the parser's stem would never match the `.commands.json` sidecar of the same run.
with source as (
    select * from {{ source('benchmarks', 'benchmark_runs') }}
),

deduplicated as (
    select *
    from source
    qualify row_number() over (
        partition by run_id
        order by coalesce(has_per_request, false) desc, _loaded_at desc, _file_hash, _source_line
    ) = 1
),

final as (
    select
        run_id,
        tool,
        tool_version,
        run_label,
        regexp_replace(_source_file, '\.json$', '') as result_file_stem,
        run_started_at,
        model_id,
        backend_or_provider,
        hardware,
        vm_sku,
        vm_count,
        gpu_model as gpu_model_as_written,
        {{ canonical_gpu_model('gpu_model') }} as gpu_model,
        gpu_count,
        tensor_parallel,
        pipeline_parallel,
        request_rate,
        request_rate_label,
        max_concurrency,
        num_prompts,
        duration_s,
        completed,
        failed,
        total_input_tokens,
        total_output_tokens,
        request_throughput,
        output_throughput_tok_s,
        total_token_throughput,
        ttft_ms_mean, ttft_ms_median, ttft_ms_p95, ttft_ms_p99,
        tpot_ms_mean, tpot_ms_median, tpot_ms_p95, tpot_ms_p99,
        itl_ms_mean, itl_ms_median, itl_ms_p95, itl_ms_p99,
        e2el_ms_mean, e2el_ms_median, e2el_ms_p95, e2el_ms_p99,
        goodput,
        coalesce(has_per_request, false) as has_per_request,
        scenario,
        result_value,
        result_unit,
        accelerators_total,
        metadata,
        source_format,
        _file_hash as x_file_hash,
        _source_file as x_source_file,
        _source_line as x_source_line
    from deduplicated
)

select * from final
