-- Catches idle arithmetic drifting: per pool-hour, unallocated idle + allocated - over-allocation must
-- equal billed, and idle must equal unallocated idle + allocated idle.
select *
from {{ ref('int_gpu_idle_hourly') }}
where abs(unallocated_idle_gpu_hours + allocated_gpu_hours - over_allocation_gpu_hours - billed_gpu_hours) > 1e-6
   or abs(idle_gpu_hours - unallocated_idle_gpu_hours - allocated_idle_gpu_hours) > 1e-6
