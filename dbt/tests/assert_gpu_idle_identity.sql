-- Catches idle arithmetic drifting: per pool-hour, unallocated + unobserved + allocated - over-allocation
-- must equal billed; idle must equal unallocated + underused; allocated = measured + unmeasured.
select *
from {{ ref('int_gpu_idle_hourly') }}
where abs(unallocated_gpu_hours + unobserved_gpu_hours + allocated_gpu_hours - over_allocation_gpu_hours
          - billed_gpu_hours) > 1e-6
   or abs(idle_gpu_hours - unallocated_gpu_hours - underused_gpu_hours) > 1e-6
   or abs(allocated_gpu_hours - measured_gpu_hours - unmeasured_gpu_hours) > 1e-6
