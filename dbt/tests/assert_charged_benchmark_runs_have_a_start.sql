-- Catches a serving benchmark run that would be charged (it names a workload, a GPU, a GPU count and a
-- duration) but has no start time (a result without its date, or a date in no known format): no month
-- can hold its GPU time, so neither its cost nor its accepted requests are counted. Listed, never a
-- silent $0; a warning, since the run still stands as benchmark evidence for the candidate comparison.
{{ config(severity='warn', meta={'title': 'Benchmark runs not charged: no start time', 'counts': 'benchmark runs'}) }}
select run_id, workload_id, gpu_model, gpu_count, duration_s, source_format, run_label
from {{ ref('fct_benchmark_runs') }}
where {{ gpu_ledger.charged_benchmark_run(timed=false) }} and run_started_at is null
