-- One row per benchmark run: the candidate (provider / hardware or API route), its throughput and
-- latency, produced and accepted outputs under the workload's SLOs, memory headroom and the
-- failure-test results for the same workload and GPU.
with runs as (
    select * from {{ ref('int_benchmark_runs_enriched') }}
),

accepted as (
    select * from {{ ref('int_benchmark_runs_accepted') }}
),

summaries as (
    select * from {{ ref('stg_benchmarks__runs') }}
),

memory_fit as (
    select {{ star_except(['gpu_model'], 'tests') }}, coalesce(aliases.gpu_model, tests.gpu_model) as gpu_model
    from {{ ref('stg_benchmarks__memory_fit_tests') }} as tests
    {{ join_gpu_alias('tests.gpu_model_as_written') }}
),

ops as (
    select {{ star_except(['gpu_model'], 'tests') }}, coalesce(aliases.gpu_model, tests.gpu_model) as gpu_model
    from {{ ref('stg_benchmarks__ops_tests') }} as tests
    {{ join_gpu_alias('tests.gpu_model_as_written') }}
),

-- Worst safe margin over the memory-fit tests of the same model (or the workload's declared
-- analogue, benchmark_match.memory_fit_model_id), GPU, GPU count and precision, within the
-- workload's context window.
memory_margin as (
    select
        runs.run_id,
        min(memory_fit.safe_margin_pct) as memory_margin_pct,
        sum(memory_fit.oom_count) as memory_fit_oom_count,
        count(*) as memory_fit_tests
    from runs
    inner join memory_fit
        on lower(memory_fit.model_id) in (lower(runs.model_id), runs.memory_fit_model_id)
        and memory_fit.gpu_model = runs.gpu_model
        and memory_fit.gpu_count = runs.gpu_count
        and (runs.model_precision is null or memory_fit.precision is null or memory_fit.precision = runs.model_precision)
        and (runs.context_window is null or memory_fit.context_length <= runs.context_window)
    group by runs.run_id
),

ops_summary as (
    select
        workload_id,
        gpu_model,
        count(*) as ops_tests,
        count(*) filter (where succeeded) as ops_tests_passed,
        {{ sorted_distinct_join('kind', ', ', 'not succeeded') }} as ops_failed_kinds,
        max(seconds) filter (where kind = 'cold_start') as cold_start_s,
        max(seconds) filter (where kind = 'model_load') as model_load_s
    from ops
    group by workload_id, gpu_model
),

final as (
    select
        runs.run_id,
        runs.workload_id,
        runs.team_id,
        runs.candidate,
        runs.tool,
        runs.tool_version,
        runs.source_format,
        runs.run_label,
        runs.model_id,
        runs.provider,
        runs.backend_or_provider,
        runs.vm_sku,
        runs.vm_count,
        runs.network,
        runs.gpu_model,
        runs.gpu_model_as_written,
        runs.gpu_count,
        runs.tensor_parallel,
        runs.pipeline_parallel,
        'on-demand' as pricing_category,
        runs.request_rate,
        runs.request_rate_label,
        runs.max_concurrency,
        runs.num_prompts,
        runs.run_started_at,
        runs.duration_s,
        summaries.request_throughput as requests_per_s,
        summaries.output_throughput_tok_s as output_tokens_per_s,
        summaries.total_token_throughput as total_tokens_per_s,
        summaries.total_input_tokens,
        summaries.total_output_tokens,
        coalesce(summaries.ttft_ms_median, accepted.ttft_ms_p50) as ttft_ms_p50,
        coalesce(summaries.ttft_ms_p95, accepted.ttft_ms_p95) as ttft_ms_p95,
        coalesce(summaries.ttft_ms_p99, accepted.ttft_ms_p99) as ttft_ms_p99,
        coalesce(summaries.tpot_ms_median, accepted.tpot_ms_p50) as tpot_ms_p50,
        coalesce(summaries.tpot_ms_p95, accepted.tpot_ms_p95) as tpot_ms_p95,
        coalesce(summaries.tpot_ms_p99, accepted.tpot_ms_p99) as tpot_ms_p99,
        accepted.tpot_ms_min,
        coalesce(summaries.e2el_ms_median, accepted.e2el_ms_p50) as e2el_ms_p50,
        coalesce(summaries.e2el_ms_p95, accepted.e2el_ms_p95) as e2el_ms_p95,
        coalesce(summaries.e2el_ms_p99, accepted.e2el_ms_p99) as e2el_ms_p99,
        summaries.itl_ms_median as itl_ms_p50,
        summaries.itl_ms_p95,
        summaries.itl_ms_p99,
        runs.slo_percentile,
        runs.slo_ttft_ms,
        runs.slo_tpot_ms,
        runs.slo_e2el_ms,
        runs.completed,
        runs.failed,
        accepted.produced,
        accepted.accepted,
        accepted.acceptance_basis,
        accepted.estimated_accepted_share,
        case when accepted.produced > 0 then accepted.accepted / accepted.produced end as accepted_ratio,
        summaries.goodput as tool_goodput_req_s,
        memory_margin.memory_margin_pct,
        memory_margin.memory_fit_oom_count,
        coalesce(memory_margin.memory_fit_tests, 0) as memory_fit_tests,
        coalesce(ops_summary.ops_tests, 0) as ops_tests,
        coalesce(ops_summary.ops_tests_passed, 0) as ops_tests_passed,
        ops_summary.ops_failed_kinds,
        ops_summary.cold_start_s,
        ops_summary.model_load_s,
        case when ops_summary.ops_tests is not null then
            cast(ops_summary.ops_tests_passed as string) || '/' || cast(ops_summary.ops_tests as string) || ' passed'
            || coalesce('; failed: ' || ops_summary.ops_failed_kinds, '')
        end as ops_test_summary,
        runs.model_params_b,
        runs.tpot_floor_ms,
        runs.token_throughput_ceiling,
        summaries.scenario,
        summaries.result_value,
        summaries.result_unit
    from runs
    inner join summaries on runs.run_id = summaries.run_id
    inner join accepted on runs.run_id = accepted.run_id
    left join memory_margin on runs.run_id = memory_margin.run_id
    left join ops_summary on runs.workload_id = ops_summary.workload_id and runs.gpu_model = ops_summary.gpu_model
)

select * from final
