-- Produced and accepted outputs per workload, month and basis, with the guide's denominator for
-- the workload's type: completed runs that reached target (training), accepted checkpoints
-- (fine-tuning), completed suites (evaluation), accepted assets after moderation and quality
-- filters (image, video), accepted responses / records / patches from the quality-filter export
-- (inference, coding agent), and SLO-accepted requests of benchmark runs.
with workloads as (
    select * from {{ ref('stg_registry__workloads') }}
),

training as (
    select 'production' as basis, workload_id, date_trunc('month', started_at)::date as period,
           count(*) as produced,
           count(*) filter (where outcome = 'completed' and coalesce(reached_target, false)) as accepted,
           cast(null as double) as accepted_seconds, 'training runs (accepted = completed and reached target)' as output_basis
    from {{ ref('stg_benchmarks__training_runs') }}
    group by all
),

evals as (
    select 'production' as basis, workload_id, date_trunc('month', started_at)::date as period, count(*) as produced,
           count(*) filter (where tasks_completed = tasks_total) as accepted, cast(null as double) as accepted_seconds,
           'eval suites (accepted = every task completed)' as output_basis
    from {{ ref('stg_benchmarks__eval_runs') }}
    group by all
),

quality as (
    select 'production' as basis, workload_id, date_trunc('month', day)::date as period, sum(produced) as produced,
           sum(accepted) as accepted, cast(null as double) as accepted_seconds,
           'quality-filter export (accepted after quality and safety filters)' as output_basis
    from {{ ref('stg_benchmarks__quality_outcomes') }}
    group by all
),

media as (
    -- Media batches count outputs only for months the quality-filter export does not cover.
    select 'production' as basis, media.workload_id, date_trunc('month', media.started_at)::date as period,
           sum(media.produced) as produced, sum(media.accepted) as accepted,
           sum(media.seconds_of_video * media.accepted / nullif(media.produced, 0)) as accepted_seconds,
           'media batches (accepted after moderation)' as output_basis
    from {{ ref('stg_benchmarks__media_batches') }} as media
    group by all
),

benchmark as (
    select 'benchmark' as basis, workload_id, date_trunc('month', run_started_at)::date as period,
           sum(produced) as produced, sum(accepted) as accepted, cast(null as double) as accepted_seconds,
           'benchmark requests (accepted = succeeded and met every SLO)' as output_basis
    from {{ ref('fct_benchmark_runs') }}
    where {{ gpu_ledger.charged_benchmark_run() }}
    group by all
),

video_seconds as (
    select workload_id, date_trunc('month', started_at)::date as period,
           sum(seconds_of_video * accepted / nullif(produced, 0)) as accepted_seconds
    from {{ ref('stg_benchmarks__media_batches') }}
    where seconds_of_video is not null
    group by all
),

unioned as (
    select * from training
    union all select * from evals
    union all select * from quality
    union all
    select media.* from media
    where not exists (
        select 1 from quality where quality.workload_id = media.workload_id and quality.period = media.period
    )
    union all select * from benchmark
),

final as (
    select
        unioned.basis,
        unioned.workload_id,
        unioned.period,
        cast(unioned.produced as bigint) as produced_outputs,
        cast(unioned.accepted as bigint) as accepted_outputs,
        coalesce(unioned.accepted_seconds, video_seconds.accepted_seconds) as accepted_seconds,
        unioned.output_basis
    from unioned
    left join video_seconds
        on video_seconds.workload_id = unioned.workload_id and video_seconds.period = unioned.period
        and unioned.basis = 'production'
)

select * from final
