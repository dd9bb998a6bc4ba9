-- Catches latency percentiles out of order (p50 > p95 or p95 > p99, where present): swapped
-- columns or unit mix-ups. Real files can round, hence a warning.
{{ config(severity='warn', meta={'title': 'Benchmark latency percentiles out of order', 'counts': 'benchmark runs'}) }}
select run_id, metric, p50, p95, p99
from (
    select run_id, 'ttft' as metric, ttft_ms_p50 as p50, ttft_ms_p95 as p95, ttft_ms_p99 as p99 from {{ ref('fct_benchmark_runs') }}
    union all
    select run_id, 'tpot', tpot_ms_p50, tpot_ms_p95, tpot_ms_p99 from {{ ref('fct_benchmark_runs') }}
    union all
    select run_id, 'e2el', e2el_ms_p50, e2el_ms_p95, e2el_ms_p99 from {{ ref('fct_benchmark_runs') }}
    union all
    select run_id, 'itl', itl_ms_p50, itl_ms_p95, itl_ms_p99 from {{ ref('fct_benchmark_runs') }}
) as percentiles
where p50 > coalesce(p95, p99) or p95 > p99
