-- One row per benchmark request with its acceptance under the SLOs of the run's workload (vLLM
-- goodput semantics): accepted = succeeded and ttft <= slo_ttft and tpot <= slo_tpot and
-- e2el <= slo_e2el; a missing SLO does not constrain. As in vLLM, a request with at most one
-- output token has no TPOT and counts as TPOT 0; any other missing metric fails its SLO.
with requests as (
    select * from {{ ref('stg_benchmarks__requests') }}
),

runs as (
    select run_id, slo_ttft_ms, slo_tpot_ms, slo_e2el_ms
    from {{ ref('int_benchmark_runs_enriched') }}
),

final as (
    select
        requests.run_id,
        requests.request_index,
        requests.succeeded,
        requests.error,
        requests.input_tokens,
        requests.output_tokens,
        requests.ttft_ms,
        requests.tpot_ms,
        requests.e2el_ms,
        coalesce(runs.slo_ttft_ms is null or requests.ttft_ms <= runs.slo_ttft_ms, false) as meets_ttft,
        coalesce(
            runs.slo_tpot_ms is null
            or coalesce(requests.tpot_ms, case when requests.output_tokens <= 1 then 0 end) <= runs.slo_tpot_ms,
            false
        ) as meets_tpot,
        coalesce(runs.slo_e2el_ms is null or requests.e2el_ms <= runs.slo_e2el_ms, false) as meets_e2el,
        requests.succeeded and meets_ttft and meets_tpot and meets_e2el as accepted
    from requests
    inner join runs on requests.run_id = runs.run_id
)

select * from final
