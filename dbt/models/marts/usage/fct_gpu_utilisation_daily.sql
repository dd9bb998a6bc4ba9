-- GPU-hours per day, team, workload and GPU model: billed, allocated, used, idle (unallocated and
-- underused), missing readings (unmeasured, unobserved), failed and cancelled. The rules are
-- int_gpu_utilisation_daily's, which builds these rows incrementally by UTC day; this mart publishes them
-- without its build columns (a few thousand rows a year, copied whole).
select {{ star_except(['x_inputs_digest', 'x_built_at']) }}
from {{ ref('int_gpu_utilisation_daily') }}
