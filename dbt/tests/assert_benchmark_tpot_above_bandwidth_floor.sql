-- Catches a run whose fastest request decodes faster than one read of the model's weights per
-- token from the GPUs' HBM allows (TPOT < weights bytes / (GPUs x bandwidth)): wrong GPU count,
-- model size or units. Speculative decoding could legitimately beat it, hence a warning.
{{ config(severity='warn', meta={'title': 'Benchmark decodes faster than memory bandwidth allows', 'counts': 'benchmark runs'}) }}
select run_id, candidate, gpu_model, gpu_count, tpot_floor_ms,
       coalesce(tpot_ms_min, tpot_ms_p50) as observed_tpot_ms
from {{ ref('fct_benchmark_runs') }}
where tpot_floor_ms is not null
  and coalesce(tpot_ms_min, tpot_ms_p50) < tpot_floor_ms
