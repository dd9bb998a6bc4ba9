-- Catches a run whose token throughput needs more compute than the GPUs' dense peak
-- (2 x params FLOPs per token > GPUs x TFLOPS): wrong GPU count, model or units.
{{ config(severity='warn', meta={'title': 'Benchmark throughput above the GPU compute peak', 'counts': 'benchmark runs'}) }}
select run_id, candidate, gpu_model, gpu_count, token_throughput_ceiling,
       coalesce(total_tokens_per_s, output_tokens_per_s) as observed_tokens_per_s
from {{ ref('fct_benchmark_runs') }}
where token_throughput_ceiling is not null
  and coalesce(total_tokens_per_s, output_tokens_per_s) > token_throughput_ceiling
