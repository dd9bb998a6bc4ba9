-- Catches a benchmark run that accepts more outputs than it produced (or a negative count).
select run_id, produced, accepted
from {{ ref('fct_benchmark_runs') }}
where accepted > produced or accepted < 0
