-- Produced and accepted outputs (responses) per benchmark run, and the latency percentiles of the
-- per-request data. acceptance_basis:
--   per-request      the run's request rows cover all its requests (rows >= completed + failed):
--                    produced = succeeded requests, accepted = requests meeting every SLO.
--   summary-estimate only summary statistics (or a sample of requests): see the yml description.
--   not-measured     the run states no completed count (MLPerf results).
with runs as (
    select * from {{ ref('int_benchmark_runs_enriched') }}
),

summaries as (
    select run_id,
           ttft_ms_median, ttft_ms_p95, ttft_ms_p99,
           tpot_ms_median, tpot_ms_p95, tpot_ms_p99,
           e2el_ms_median, e2el_ms_p95, e2el_ms_p99
    from {{ ref('stg_benchmarks__runs') }}
),

requests as (
    select * from {{ ref('int_benchmark_requests_accepted') }}
),

request_stats as (
    select
        run_id,
        count(*) as request_rows,
        count(*) filter (where succeeded) as succeeded_requests,
        count(*) filter (where accepted) as accepted_requests,
        percentile_cont(0.5) within group (order by ttft_ms) filter (where succeeded) as ttft_ms_p50,
        percentile_cont(0.95) within group (order by ttft_ms) filter (where succeeded) as ttft_ms_p95,
        percentile_cont(0.99) within group (order by ttft_ms) filter (where succeeded) as ttft_ms_p99,
        percentile_cont(0.5) within group (order by tpot_ms) filter (where succeeded) as tpot_ms_p50,
        percentile_cont(0.95) within group (order by tpot_ms) filter (where succeeded) as tpot_ms_p95,
        percentile_cont(0.99) within group (order by tpot_ms) filter (where succeeded) as tpot_ms_p99,
        min(tpot_ms) filter (where succeeded) as tpot_ms_min,
        percentile_cont(0.5) within group (order by e2el_ms) filter (where succeeded) as e2el_ms_p50,
        percentile_cont(0.95) within group (order by e2el_ms) filter (where succeeded) as e2el_ms_p95,
        percentile_cont(0.99) within group (order by e2el_ms) filter (where succeeded) as e2el_ms_p99
    from requests
    group by run_id
),

-- Share of completed requests known to meet one SLO from the summary percentiles: 0.99 when p99
-- is within it, 0.95 when p95 is (p95 as stated, else interpolated linearly between median and
-- p99, which overstates p95 for right-skewed latencies, i.e. errs conservative), 0.5 when only
-- the median is, else 0 (also when the summary has no statistic for that metric). null = no SLO.
metric_shares as (
    select
        runs.run_id,
        {% for m in ['ttft', 'tpot', 'e2el'] %}
        case
            when runs.slo_{{ m }}_ms is null then null
            when s.{{ m }}_ms_p99 <= runs.slo_{{ m }}_ms then 0.99
            when coalesce(s.{{ m }}_ms_p95,
                          s.{{ m }}_ms_median + (s.{{ m }}_ms_p99 - s.{{ m }}_ms_median) * (0.95 - 0.5) / (0.99 - 0.5))
                 <= runs.slo_{{ m }}_ms then 0.95
            when s.{{ m }}_ms_median <= runs.slo_{{ m }}_ms then 0.5
            else 0.0
        end as {{ m }}_share{{ ',' if not loop.last }}
        {% endfor %}
    from runs
    inner join summaries as s on runs.run_id = s.run_id
),

-- At least (1 - sum of the misses) of the requests meet every SLO (union bound): a lower bound.
estimates as (
    select
        run_id,
        ttft_share,
        tpot_share,
        e2el_share,
        greatest(0.0, 1.0 - (1.0 - coalesce(ttft_share, 1.0)) - (1.0 - coalesce(tpot_share, 1.0))
                           - (1.0 - coalesce(e2el_share, 1.0))) as estimated_accepted_share
    from metric_shares
),

final as (
    select
        runs.run_id,
        case
            when request_stats.request_rows > 0
                 and request_stats.request_rows >= coalesce(runs.completed, 0) + coalesce(runs.failed, 0)
                then 'per-request'
            when runs.completed is not null then 'summary-estimate'
            else 'not-measured'
        end as acceptance_basis,
        case acceptance_basis
            when 'per-request' then request_stats.succeeded_requests
            when 'summary-estimate' then runs.completed
        end as produced,
        case acceptance_basis
            when 'per-request' then request_stats.accepted_requests
            when 'summary-estimate' then cast(floor(runs.completed * estimates.estimated_accepted_share) as bigint)
        end as accepted,
        case when acceptance_basis = 'summary-estimate' then estimates.estimated_accepted_share end
            as estimated_accepted_share,
        coalesce(request_stats.request_rows, 0) as request_rows,
        request_stats.ttft_ms_p50, request_stats.ttft_ms_p95, request_stats.ttft_ms_p99,
        request_stats.tpot_ms_p50, request_stats.tpot_ms_p95, request_stats.tpot_ms_p99,
        request_stats.tpot_ms_min,
        request_stats.e2el_ms_p50, request_stats.e2el_ms_p95, request_stats.e2el_ms_p99
    from runs
    left join request_stats on runs.run_id = request_stats.run_id
    left join estimates on runs.run_id = estimates.run_id
)

select * from final
