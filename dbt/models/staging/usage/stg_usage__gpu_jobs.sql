-- Scheduler jobs (Slurm) and Kubernetes allocations (OpenCost), the latest export of each job
-- (macros/latest_rows.sql staged_gpu_jobs; int_gpu_jobs_attributed reads the same SQL for the jobs of
-- the days it rebuilds).
{{ staged_gpu_jobs() }}
