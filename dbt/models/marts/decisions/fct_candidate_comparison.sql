-- Stage 4 of the guide, per registry workload: one row per candidate one can actually rent, sized
-- to the workload's monthly demand and compared with what the workload costs today on the same month
-- (docs/cost_model.md, "Stage-4 candidates"; int_decision_demand puts both on one horizon).
--   route_kind 'current'          today's run-rate for the month (the baseline)
--   route_kind 'today_shape'      today's own instances (provider, type, count, price as billed) priced
--                                 by this model: the back-test, its gap to 'current' in backtest_gap_pct
--   route_kind 'gpu'              whole instances of a rentable shape (int_decision_instance_offers):
--                                 serving workloads sized by measured goodput at the SLO and by memory at
--                                 the concurrency split over the replicas; run-priced workloads
--                                 (training, media, evals) from their own runs' GPU-hours per output
--   route_kind 'api'              a model API route of the registry (benchmark_match.api_routes)
--   route_kind 'missing_evidence' no throughput evidence for GPU candidates: names the benchmark to run
-- Gates: memory margin (>= policy threshold at the sessions each replica holds), latency SLO (TTFT,
-- TPOT, e2e at the workload percentile; each failed one shows value/target) and quality acceptance.
-- Status: a route that passes every gate and costs less than today is eligible and ranked; one that
-- passes but costs as much or more is 'costs more' (never recommended); one that fails only for a
-- missing measurement is 'eligible pending evidence' with the benchmark to run.
with workloads as (
    select * from {{ ref('stg_registry__workloads') }}
),

policies as (
    select * from {{ ref('int_decision_policies') }}
),

demand as (
    select * from {{ ref('int_decision_demand') }}
),

quality as (
    -- Production acceptance of the quality filter in the demand month (accepted / produced).
    select workload_id, sum(accepted) / nullif(sum(produced), 0) as quality_acceptance
    from {{ ref('stg_benchmarks__quality_outcomes') }}
    group by workload_id
),

extras as (
    select workload_id,
           coalesce(cast({{ json_text('assumptions', "'storage_monthly'") }} as double), 0)
               + coalesce(cast({{ json_text('assumptions', "'network_monthly'") }} as double), 0)
               + coalesce(cast({{ json_text('assumptions', "'serving_stack_monthly'") }} as double), 0) as storage_network,
           coalesce(cast({{ json_text('assumptions', "'gateway_monthly'") }} as double), 150) as gateway
    from workloads
),

serving_runs as (
    -- The workload's own serving runs, and serving runs of the same model made for another workload
    -- (analogue: another request shape). Own runs always rank first.
    select runs.run_id, runs.gpu_model, runs.gpu_count, runs.ttft_ms_p95, runs.tpot_ms_p95, runs.e2el_ms_p95,
           workloads.workload_id as for_workload_id,
           runs.workload_id = workloads.workload_id as is_own_run,
           runs.accepted / runs.duration_s * 3600.0 as goodput_per_hour,
           coalesce(runs.failed, 0) / nullif(coalesce(runs.completed, 0) + coalesce(runs.failed, 0), 0) as failed_share,
           runs.accepted >= runs.produced * case when workloads.slo_percentile = 'p99' then 0.99 else 0.95 end as run_meets_slo,
           'serving' as src_kind, cast(null as string) as src_note
    from {{ ref('fct_benchmark_runs') }} as runs
    inner join workloads
        on runs.workload_id = workloads.workload_id
        or (runs.workload_id is not null and runs.model_id = workloads.model_name
            and workloads.workload_type in ('real-time inference', 'batch inference', 'embedding'))
    where runs.gpu_model is not null and runs.gpu_count > 0 and runs.duration_s > 0 and runs.accepted > 0
),

encoder_submissions as (
    -- Embedding workloads: MLPerf Inference results of an encoder of the same class (default BERT-large,
    -- `bert-99` Offline; the registry may name another in benchmarks.encoder_analogue) are the analogue.
    -- One row per GPU model: the median per-accelerator throughput over the submissions (the best
    -- submission would flatter the GPU; MLPerf closed allows TensorRT and INT8 at 99 % accuracy).
    select workloads.workload_id as for_workload_id, runs.gpu_model, runs.model_id,
           min(runs.run_id) as run_id,
           count(*) as submissions,
           median(runs.result_value / runs.gpu_count) as samples_per_s_per_gpu
    from {{ ref('fct_benchmark_runs') }} as runs
    inner join workloads
        on workloads.workload_type = 'embedding'
        and runs.model_id = coalesce({{ json_text('workloads.benchmark_match', "'encoder_analogue'") }}, 'bert-99')
    where runs.tool = 'mlperf' and runs.scenario = 'Offline' and runs.result_unit = 'samples/s'
      and runs.gpu_model is not null and runs.gpu_count > 0 and runs.result_value > 0
    group by workloads.workload_id, runs.gpu_model, runs.model_id
),

encoder_runs as (
    -- An MLPerf sample is a 384-token sequence: a workload with longer records (mean input tokens, else
    -- its context window) scales throughput down by 384 / tokens; shorter records are not scaled up
    -- (batching and padding rarely pass that gain on).
    select enc.run_id, enc.gpu_model, 1 as gpu_count,
           cast(null as double) as ttft_ms_p95, cast(null as double) as tpot_ms_p95, cast(null as double) as e2el_ms_p95,
           enc.for_workload_id, false as is_own_run,
           enc.samples_per_s_per_gpu * 3600.0
               * least(1.0, 384.0 / coalesce(workloads.mean_input_tokens, workloads.context_window, 384)) as goodput_per_hour,
           cast(0 as double) as failed_share, true as run_meets_slo,
           'encoder' as src_kind,
           'MLPerf Inference ' || enc.model_id || ' Offline, median of ' || cast(enc.submissions as string)
               || ' submission(s) on ' || enc.gpu_model || ': ' || cast(round(enc.samples_per_s_per_gpu, 1) as string)
               || ' samples/s per GPU x min(1, 384/' || cast(coalesce(workloads.mean_input_tokens, workloads.context_window, 384) as string)
               || ' tokens); an encoder analogue (tuned submissions, INT8 allowed)' as src_note
    from encoder_submissions as enc
    inner join workloads on workloads.workload_id = enc.for_workload_id
),

runs as (
    select * from serving_runs
    union all
    select * from encoder_runs
),

ranked_runs as (
    -- The best serving run: own before analogue, SLO met, latency recorded, highest goodput.
    select runs.*, gpus.memory_bandwidth_gbs as run_bandwidth,
           row_number() over (
               partition by runs.for_workload_id, runs.gpu_model
               order by is_own_run desc, run_meets_slo desc, (ttft_ms_p95 is not null) desc, goodput_per_hour desc, run_id
           ) as rank_on_gpu,
           row_number() over (
               partition by runs.for_workload_id
               order by is_own_run desc, run_meets_slo desc, (ttft_ms_p95 is not null) desc, goodput_per_hour desc, run_id
           ) as rank_overall
    from runs
    inner join {{ ref('dim_gpu') }} as gpus on gpus.gpu_model = runs.gpu_model
),

measured_on_gpu as (
    -- Measured beats projected: a GPU the workload's model was served on uses that run.
    select ranked_runs.*, for_workload_id as decision_workload_id from ranked_runs where rank_on_gpu = 1
),

reference as (
    -- Only GPUs without a measured run are projected, from the workload's best run by memory bandwidth.
    select ranked_runs.*, for_workload_id as decision_workload_id from ranked_runs where rank_overall = 1
),

fit_one_session as (
    -- Memory at one session per shape; every further session adds one session's KV cache.
    select workload_id, gpu_model, gpu_count, required_gb, kv_cache_gb as kv_gb_per_session, available_gb
    from {{ ref('fct_memory_fit') }}
    where concurrency = 1
),

production_concurrency as (
    select workload_id, cast(coalesce(concurrency, 1) as integer) as sessions from workloads
),

demand_month_hours as (
    -- The GPU bill hours of each workload's demand month: today's shape and how many of it ran at once.
    select mapped.*
    from {{ ref('int_gpu_billing_hours_mapped') }} as mapped
    inner join demand
        on demand.workload_id = mapped.workload_id
        and cast(date_trunc('month', mapped.hour_start) as date) = demand.today_period
),

billed_shapes as (
    -- Today's own instances: the GPU instance type billed most hours to the workload in its demand
    -- month, how many ran at once, and the effective rate it was billed per instance-hour.
    select mapped.workload_id, mapped.provider, mapped.instance_type, mapped.gpu_model,
           cast(max(mapped.gpu_count) as integer) as gpus_per_instance,
           -- Summed in DECIMAL: a DOUBLE sum depends on the order threads add in, and billed_hours is
           -- rounded to 2 decimals downstream (548.97 vs 548.98 between two builds of the same data).
           cast(sum(cast(mapped.billed_gpu_hours / mapped.gpu_count as decimal(38, 12))) as double) as instance_hours
    from demand_month_hours as mapped
    where mapped.gpu_model is not null and mapped.gpu_count >= 1 and mapped.instance_type is not null
    group by mapped.workload_id, mapped.provider, mapped.instance_type, mapped.gpu_model
),

billed_concurrent as (
    -- How many instances ran at once in an hour of the demand month, the month billed_shapes and billed_cost
    -- read. A peak of another month (two instances in March, one in April) made today's shape two instances
    -- billed every hour of April, twice the run-rate it is tested against.
    select mapped.workload_id, mapped.instance_type, max(instances_in_hour) as instances
    from (
        select workload_id, instance_type, hour_start, count(distinct resource_id) as instances_in_hour
        from demand_month_hours
        group by workload_id, instance_type, hour_start
    ) as mapped
    group by mapped.workload_id, mapped.instance_type
),

billed_cost as (
    -- What those instance-hours cost, in USD: each bill line's share for its GPU-hours in the demand month
    -- (the hours billed_shapes counts; a line over the month-end is split pro rata), at the rate of the
    -- line's charge day (fct_fx_rates_daily). Lines of another month or currency are never added as
    -- they are; a line without a rate leaves the shape unpriced (null), never converted at 1.0.
    select lines.workload_id, lines.instance_type,
           case when count(*) filter (where lines.rate is null) = 0
                then cast(sum({{ money('lines.month_cost * lines.rate') }}) as double) end as effective_cost,
           max(lines.pricing_category) as pricing_category
    from (
        select keys.workload_id, keys.instance_type,
               -- DECIMAL products cast back to (38, 12) each time: scales add up in a product.
               {{ money('focus.EffectiveCost * cast(keys.month_gpu_hours / keys.gpu_hours as decimal(18, 12))') }} as month_cost,
               cast(case when focus.BillingCurrency = 'USD' then 1 else fx.rate_to_reporting end as decimal(18, 10)) as rate,
               focus.PricingCategory as pricing_category
        from (
            select mapped.workload_id, mapped.instance_type, mapped.x_charge_key,
                   sum(case when cast(date_trunc('month', mapped.hour_start) as date) = demand.today_period
                            then mapped.billed_gpu_hours else 0 end) as month_gpu_hours,
                   sum(mapped.billed_gpu_hours) as gpu_hours
            from {{ ref('int_gpu_billing_hours_mapped') }} as mapped
            inner join demand on demand.workload_id = mapped.workload_id
            group by mapped.workload_id, mapped.instance_type, mapped.x_charge_key
        ) as keys
        inner join {{ ref('ledger_focus') }} as focus on focus.x_charge_key = keys.x_charge_key
        left join {{ ref('fct_fx_rates_daily') }} as fx
            on fx.currency = focus.BillingCurrency and fx.day = cast(focus.ChargePeriodStart as date)
            and fx.reporting_currency = 'USD'
        where keys.month_gpu_hours > 0
    ) as lines
    group by lines.workload_id, lines.instance_type
),

today_shape_offers as (
    select billed_shapes.workload_id, billed_shapes.provider, billed_shapes.instance_type,
           cast(null as string) as region, billed_shapes.gpu_model, billed_shapes.gpus_per_instance,
           gpus.memory_gb as gpu_memory_gb, gpus.memory_bandwidth_gbs,
           round(billed_cost.effective_cost / billed_shapes.instance_hours, 6) as price_per_instance_hour,
           case when billed_shapes.gpus_per_instance = 1 then 'none (single GPU)'
                else coalesce(gpus.interconnect, 'unknown') end as intra_node_interconnect,
           'as billed today' as inter_node_network,
           true as multi_node_allowed,
           cast(billed_concurrent.instances as integer) as today_instances,
           billed_shapes.instance_hours as today_instance_hours,
           'as billed (' || coalesce(billed_cost.pricing_category, 'unknown') || ')' as pricing_category,
           true as is_today_shape
    from billed_shapes
    inner join billed_concurrent using (workload_id, instance_type)
    inner join billed_cost using (workload_id, instance_type)
    inner join {{ ref('dim_gpu') }} as gpus on gpus.gpu_model = billed_shapes.gpu_model
    where billed_shapes.instance_hours > 0 and billed_cost.effective_cost > 0
    qualify row_number() over (partition by billed_shapes.workload_id
                               order by billed_shapes.instance_hours desc, billed_shapes.instance_type) = 1
),

all_offers as (
    select reference.decision_workload_id as workload_id, offers.provider, offers.instance_type, offers.region, offers.gpu_model,
           offers.gpus_per_instance, offers.gpu_memory_gb, offers.memory_bandwidth_gbs,
           cast(offers.price_per_instance_hour as double) as price_per_instance_hour,
           offers.intra_node_interconnect, offers.inter_node_network, offers.multi_node_allowed,
           cast(null as integer) as today_instances, cast(null as double) as today_instance_hours,
           'on-demand' as pricing_category, false as is_today_shape
    from reference
    cross join {{ ref('int_decision_instance_offers') }} as offers
    union all
    select t.workload_id, t.provider, t.instance_type, t.region, t.gpu_model, t.gpus_per_instance,
           t.gpu_memory_gb, t.memory_bandwidth_gbs, t.price_per_instance_hour, t.intra_node_interconnect,
           t.inter_node_network, t.multi_node_allowed, t.today_instances, t.today_instance_hours, t.pricing_category,
           t.is_today_shape
    from today_shape_offers as t
),

shapes as (
    select
        all_offers.*,
        policies.memory_margin_min_pct,
        production_concurrency.sessions as production_sessions,
        -- Sessions one replica holds at the margin threshold, on one instance and on two.
        case when fit_one.kv_gb_per_session > 0
             then floor((fit_one.available_gb * (1 - policies.memory_margin_min_pct / 100.0)
                         - (fit_one.required_gb - fit_one.kv_gb_per_session)) / fit_one.kv_gb_per_session)
             when fit_one.required_gb is not null
                  and fit_one.required_gb <= fit_one.available_gb * (1 - policies.memory_margin_min_pct / 100.0)
                 then 1e9 end as sessions_one_instance,
        case when fit_two.kv_gb_per_session > 0
             then floor((fit_two.available_gb * (1 - policies.memory_margin_min_pct / 100.0)
                         - (fit_two.required_gb - fit_two.kv_gb_per_session)) / fit_two.kv_gb_per_session)
             when fit_two.required_gb is not null
                  and fit_two.required_gb <= fit_two.available_gb * (1 - policies.memory_margin_min_pct / 100.0)
                 then 1e9 end as sessions_two_instances,
        fit_one.required_gb as required_one, fit_one.kv_gb_per_session as kv_one, fit_one.available_gb as available_one,
        fit_two.required_gb as required_two, fit_two.kv_gb_per_session as kv_two, fit_two.available_gb as available_two,
        coalesce(measured.run_id, reference.run_id) as run_id,
        coalesce(measured.is_own_run, reference.is_own_run) as src_is_own,
        measured.run_id is not null as measured_gpu,
        coalesce(measured.gpu_count, reference.gpu_count) as src_gpu_count,
        coalesce(measured.run_bandwidth, reference.run_bandwidth) as src_bandwidth,
        coalesce(measured.gpu_model, reference.gpu_model) as src_gpu_model,
        coalesce(measured.goodput_per_hour, reference.goodput_per_hour) as src_goodput,
        case when measured.run_id is not null then measured.failed_share else reference.failed_share end as failed_share,
        case when measured.run_id is not null then measured.ttft_ms_p95 else reference.ttft_ms_p95 end as src_ttft,
        case when measured.run_id is not null then measured.tpot_ms_p95 else reference.tpot_ms_p95 end as src_tpot,
        case when measured.run_id is not null then measured.e2el_ms_p95 else reference.e2el_ms_p95 end as src_e2el,
        coalesce(measured.src_kind, reference.src_kind) as src_kind,
        coalesce(measured.src_note, reference.src_note) as src_note
    from all_offers
    left join reference on reference.decision_workload_id = all_offers.workload_id
    left join measured_on_gpu as measured
        on measured.decision_workload_id = all_offers.workload_id and measured.gpu_model = all_offers.gpu_model
    inner join production_concurrency on production_concurrency.workload_id = all_offers.workload_id
    cross join policies
    left join fit_one_session as fit_one
        on fit_one.workload_id = all_offers.workload_id and fit_one.gpu_model = all_offers.gpu_model
        and fit_one.gpu_count = all_offers.gpus_per_instance
    left join fit_one_session as fit_two
        on fit_two.workload_id = all_offers.workload_id and fit_two.gpu_model = all_offers.gpu_model
        and fit_two.gpu_count = 2 * all_offers.gpus_per_instance and all_offers.multi_node_allowed
),

per_replica as (
    select
        shapes.*,
        case when coalesce(sessions_one_instance, 0) >= 1 then 1
             when multi_node_allowed and coalesce(sessions_two_instances, 0) >= 1 then 2
             else 1 end as instances_per_replica
    from shapes
),

gpu_sized as (
    select
        per_replica.*,
        instances_per_replica * gpus_per_instance as replica_gpus,
        case when instances_per_replica = 2 then sessions_two_instances else sessions_one_instance end as sessions_fit,
        case when run_id is null then 'missing'
             when not src_is_own then 'analogue'
             when measured_gpu and instances_per_replica * gpus_per_instance = src_gpu_count then 'measured'
             when measured_gpu then 'same_gpu'
             else 'projected' end as evidence,
        -- Decode is memory-bandwidth bound: goodput scales with the replica's aggregate bandwidth
        -- (1 for the measured shape; a GPU-count ratio on a measured GPU).
        src_goodput * (instances_per_replica * gpus_per_instance * memory_bandwidth_gbs)
            / nullif(src_gpu_count * src_bandwidth, 0) as goodput_per_replica_hour,
        (src_gpu_count * src_bandwidth) / nullif(instances_per_replica * gpus_per_instance * memory_bandwidth_gbs, 0)
            as latency_scale
    from per_replica
),

gpu_replicas as (
    select
        gpu_sized.*,
        demand.monthly_accepted_demand, demand.hours_in_month, demand.extrapolation_factor,
        coalesce(quality.quality_acceptance, 1) as production_quality,
        quality.quality_acceptance is not null as has_quality,
        workloads.operating_mode,
        case when is_today_shape then greatest(1, cast(today_instances / instances_per_replica as integer))
             when workloads.operating_mode = 'always-on' then cast(greatest(1,
                 ceil(demand.monthly_accepted_demand / coalesce(quality.quality_acceptance, 1)
                      / (goodput_per_replica_hour * demand.hours_in_month * policies.serving_target_utilisation)),
                 case when sessions_fit >= 1 then ceil(production_sessions / sessions_fit) else 1 end) as bigint)
             else 1 end as replicas
    from gpu_sized
    inner join workloads using (workload_id)
    inner join demand using (workload_id)
    cross join policies
    left join quality using (workload_id)
    where (goodput_per_replica_hour > 0 or is_today_shape) and demand.monthly_accepted_demand is not null
      -- An encoder analogue is compute-bound: it prices only GPUs with a submission of their own (no
      -- projection by memory bandwidth).
      and (is_today_shape or coalesce(src_kind, 'serving') <> 'encoder' or measured_gpu)
),

gpu_rows as (
    select
        gpu_replicas.workload_id,
        case when is_today_shape then 'today_shape' else 'gpu' end as route_kind,
        -- No apostrophes in literals: Spark does not read '' as one.
        case when is_today_shape then 'today shape: ' else '' end
            || provider || ' ' || instance_type || ' (' || cast(gpus_per_instance as string) || 'x ' || gpu_model
            || ') x' || cast(case when is_today_shape then today_instances else replicas * instances_per_replica end as string)
            as candidate,
        provider, instance_type, gpu_model, gpus_per_instance, intra_node_interconnect, inter_node_network,
        cast(case when is_today_shape then today_instances else replicas * instances_per_replica end as bigint) as instances,
        price_per_instance_hour,
        -- Always-on endpoints are billed every hour of the month; batch and experiment shapes the hours
        -- the demand needs (today's shape: its billed hours at the month's run-rate).
        case when operating_mode = 'always-on' then hours_in_month
             when is_today_shape then least(hours_in_month, today_instance_hours / today_instances * extrapolation_factor)
             else least(hours_in_month, monthly_accepted_demand / production_quality / goodput_per_replica_hour) end
            as billed_hours,
        pricing_category,
        monthly_accepted_demand as accepted_outputs,
        production_quality as quality_acceptance,
        case when has_quality then 'assumed' else 'missing' end as quality_evidence,
        failed_share,
        src_ttft * latency_scale as ttft_ms_p95,
        src_tpot * latency_scale as tpot_ms_p95,
        src_e2el * latency_scale as p95_latency_ms,
        case when operating_mode = 'always-on' then cast(ceil(production_sessions / cast(replicas as double)) as integer)
             else production_sessions end as sessions_per_replica,
        evidence,
        evidence as latency_evidence,
        case when evidence = 'measured' then cast(null as string)
             when src_kind = 'encoder' then 'an embedding throughput benchmark (records per second at the latency target) of the workload model on '
                  || cast(instances_per_replica * gpus_per_instance as string) || 'x ' || gpu_model
             else 'a serving benchmark (vLLM/guidellm goodput, TTFT/TPOT at p95) of the workload model on '
                  || cast(instances_per_replica * gpus_per_instance as string) || 'x ' || gpu_model end
            as evidence_to_run,
        required_one, kv_one, available_one, required_two, kv_two, available_two, instances_per_replica,
        'goodput ' || case when src_kind = 'encoder' then src_note || ', scaled by GPU count'
                           when evidence = 'missing' then 'not benchmarked: the instances billed today, priced as billed, latency unknown'
                           when evidence = 'analogue' then 'from a serving run of the same model for another workload (run '
                                || run_id || ', ' || src_gpu_model || ' x' || cast(src_gpu_count as string)
                                || ', another request shape), scaled by memory bandwidth'
                           when evidence = 'measured' then 'measured (run ' || run_id || ')'
                           when evidence = 'same_gpu' then 'measured on ' || src_gpu_model || ' x' || cast(src_gpu_count as string)
                                || ' (run ' || run_id || '), scaled by GPU count'
                           else 'projected from run ' || run_id || ' (' || src_gpu_model || ' x'
                                || cast(src_gpu_count as string) || ') by memory bandwidth' end
            || '; ' || cast(replicas as string) || ' replica(s) of ' || cast(instances_per_replica as string) || ' instance(s)'
            || case when instances_per_replica = 2 then ' over ' || inter_node_network || ' (multi-node)' else '' end
            || '; interconnect ' || intra_node_interconnect || '; network ' || inter_node_network
            || '; quality acceptance assumed from production (same model and precision)' as notes
    from gpu_replicas
),

gpu_rows_fit as (
    select gpu_rows.*,
           case when instances_per_replica = 2
                then 100 * (available_two - (required_two + kv_two * (sessions_per_replica - 1))) / available_two
                else 100 * (available_one - (required_one + kv_one * (sessions_per_replica - 1))) / available_one
           end as memory_margin_raw
    from gpu_rows
),

own_work as (
    -- Run-priced workloads (training, fine-tuning, media, evals): GPU-hours per accepted output from
    -- their own runs, failed runs included (their hours stay in the numerator).
    select workload_id, gpu_model, provider, max(gpu_count) as job_gpus,
           cast(sum(cast(gpu_hours as decimal(38, 12))) as double) as gpu_hours, sum(accepted) as accepted, count(*) as runs
    from (
        select workload_id, gpu_model, provider, gpu_count, gpu_count * wall_hours as gpu_hours,
               case when reached_target then 1 else 0 end as accepted
        from {{ ref('stg_benchmarks__training_runs') }}
        union all
        select workload_id, gpu_model, provider, gpu_count, gpu_count * wall_hours,
               case when outcome = 'completed' then 1 else 0 end
        from {{ ref('stg_benchmarks__eval_runs') }}
        union all
        select workload_id, gpu_model, cast(null as string), gpu_count, gpu_hours, accepted
        from {{ ref('stg_benchmarks__media_batches') }}
    ) as work
    where workload_id is not null and gpu_model is not null and gpu_count > 0 and gpu_hours > 0
    group by workload_id, gpu_model, provider
),

own_work_best as (
    select own_work.*, own_work.gpu_hours / own_work.accepted as gpu_hours_per_output,
           gpus.bf16_dense_tflops as own_tflops
    from own_work
    inner join {{ ref('dim_gpu') }} as gpus on gpus.gpu_model = own_work.gpu_model
    where own_work.accepted > 0
    qualify row_number() over (partition by own_work.workload_id
                               order by own_work.gpu_hours / own_work.accepted, own_work.gpu_model) = 1
),

mlperf_training as (
    -- MLPerf Training: GPU-hours to reach the benchmark's quality target, per benchmark and GPU model
    -- (median over the result logs; each log is one timed run of a whole system).
    select model_id as benchmark, gpu_model,
           median(duration_s / 3600.0 * gpu_count) as gpu_hours_to_train,
           count(*) as results
    from {{ ref('fct_benchmark_runs') }}
    where tool = 'mlperf_training' and completed = 1 and gpu_model is not null and gpu_count > 0 and duration_s > 0
    group by model_id, gpu_model
),

workload_mlperf as (
    -- The MLPerf Training benchmark that stands for a run-priced workload: the registry's
    -- benchmarks.mlperf_training, else LoRA/fine-tuning -> llama2_70b_lora.
    select workload_id,
           coalesce({{ json_text('benchmark_match', "'mlperf_training'") }},
                    case when workload_type in ('full fine-tune', 'lora fine-tune') then 'llama2_70b_lora' end) as benchmark
    from workloads
),

work_rows as (
    select
        own.workload_id,
        'gpu' as route_kind,
        offers.provider || ' ' || offers.instance_type || ' (' || cast(offers.gpus_per_instance as string) || 'x '
            || offers.gpu_model || ') x' || cast(cast(ceil(own.job_gpus / cast(offers.gpus_per_instance as double)) as bigint) as string)
            as candidate,
        offers.provider, offers.instance_type, offers.gpu_model, offers.gpus_per_instance,
        offers.intra_node_interconnect, offers.inter_node_network,
        cast(ceil(own.job_gpus / cast(offers.gpus_per_instance as double)) as bigint) as instances,
        cast(offers.price_per_instance_hour as double) as price_per_instance_hour,
        -- The job keeps its GPU count; its wall hours scale with compute (BF16 dense TFLOPS) on another GPU.
        -- On another GPU: the MLPerf Training GPU-hours ratio of the two GPUs where both have results
        -- (measured training speed, memory and scaling included), else BF16 dense TFLOPS (compute-bound).
        demand.monthly_accepted_demand * own.gpu_hours_per_output / own.job_gpus
            * case when offers.gpu_model = own.gpu_model then 1.0
                   when m_cand.gpu_hours_to_train > 0 and m_own.gpu_hours_to_train > 0
                       then m_cand.gpu_hours_to_train / m_own.gpu_hours_to_train
                   else cast(own.own_tflops as double) / cast(gpus.bf16_dense_tflops as double) end as billed_hours,
        'on-demand' as pricing_category,
        demand.monthly_accepted_demand as accepted_outputs,
        cast(1.0 as double) as quality_acceptance,
        'assumed' as quality_evidence,
        cast(0 as double) as failed_share,
        cast(null as double) as ttft_ms_p95, cast(null as double) as tpot_ms_p95, cast(null as double) as p95_latency_ms,
        1 as sessions_per_replica,
        case when offers.gpu_model = own.gpu_model and offers.provider = own.provider then 'measured'
             when offers.gpu_model = own.gpu_model then 'same_gpu'
             else 'projected' end as evidence,
        case when offers.gpu_model = own.gpu_model then 'measured' else 'projected' end as latency_evidence,
        case when offers.gpu_model = own.gpu_model and offers.provider = own.provider then cast(null as string)
             else 'a run of the workload on ' || offers.provider || ' ' || offers.instance_type
                  || ' (GPU-hours per accepted output, acceptance)' end as evidence_to_run,
        fit.required_gb as required_one, fit.kv_gb_per_session as kv_one, fit.available_gb as available_one,
        cast(null as double) as required_two, cast(null as double) as kv_two, cast(null as double) as available_two,
        1 as instances_per_replica,
        'GPU-hours per accepted output ' || cast(round(own.gpu_hours_per_output, 3) as string) || ' from '
            || cast(own.runs as string) || ' own run(s) on ' || own.gpu_model || ' x' || cast(own.job_gpus as string)
            || case when offers.gpu_model = own.gpu_model then ', re-priced on this offer'
                    when m_cand.gpu_hours_to_train > 0 and m_own.gpu_hours_to_train > 0
                        then ', scaled by MLPerf Training ' || wm.benchmark || ' GPU-hours to train '
                             || own.gpu_model || ' ' || cast(round(m_own.gpu_hours_to_train, 2) as string) || ' ('
                             || cast(m_own.results as string) || ' result(s)) -> ' || offers.gpu_model || ' '
                             || cast(round(m_cand.gpu_hours_to_train, 2) as string) || ' (' || cast(m_cand.results as string)
                             || ' result(s)): x ' || cast(round(m_cand.gpu_hours_to_train / m_own.gpu_hours_to_train, 3) as string)
                    else ', scaled by BF16 dense TFLOPS ' || cast(own.own_tflops as string) || '/'
                         || cast(gpus.bf16_dense_tflops as string) end
            || '; failed runs stay in the hours (no separate failure loss)'
            || case when ceil(own.job_gpus / cast(offers.gpus_per_instance as double)) > 1 and not offers.multi_node_allowed
                    then '; needs several instances but the network allows no multi-node job' else '' end as notes,
        ceil(own.job_gpus / cast(offers.gpus_per_instance as double)) > 1 and not offers.multi_node_allowed as topology_blocked
    from own_work_best as own
    inner join demand on demand.workload_id = own.workload_id
    cross join {{ ref('int_decision_instance_offers') }} as offers
    inner join {{ ref('dim_gpu') }} as gpus on gpus.gpu_model = offers.gpu_model
    -- Memory is checked on one instance holding the whole training state (conservative: sharding over
    -- more instances only lowers the per-GPU share).
    left join fit_one_session as fit
        on fit.workload_id = own.workload_id and fit.gpu_model = offers.gpu_model
        and fit.gpu_count = offers.gpus_per_instance
    left join reference on reference.decision_workload_id = own.workload_id
    left join workload_mlperf as wm on wm.workload_id = own.workload_id
    left join mlperf_training as m_own on m_own.benchmark = wm.benchmark and m_own.gpu_model = own.gpu_model
    left join mlperf_training as m_cand on m_cand.benchmark = wm.benchmark and m_cand.gpu_model = offers.gpu_model
    where demand.monthly_accepted_demand is not null and reference.decision_workload_id is null
      and (offers.gpu_model = own.gpu_model or (gpus.bf16_dense_tflops > 0 and own.own_tflops > 0)
           or (m_cand.gpu_hours_to_train > 0 and m_own.gpu_hours_to_train > 0))
),

compute_rows as (
    select workload_id, route_kind, candidate, provider, instance_type, gpu_model, gpus_per_instance,
           intra_node_interconnect, inter_node_network, instances, price_per_instance_hour, billed_hours,
           pricing_category, accepted_outputs, quality_acceptance, quality_evidence, failed_share,
           ttft_ms_p95, tpot_ms_p95, p95_latency_ms, sessions_per_replica, evidence, latency_evidence,
           evidence_to_run, memory_margin_raw, false as topology_blocked, notes
    from gpu_rows_fit
    union all
    select workload_id, route_kind, candidate, provider, instance_type, gpu_model, gpus_per_instance,
           intra_node_interconnect, inter_node_network, instances, price_per_instance_hour, billed_hours,
           pricing_category, accepted_outputs, quality_acceptance, quality_evidence, failed_share,
           ttft_ms_p95, tpot_ms_p95, p95_latency_ms, sessions_per_replica, evidence, latency_evidence,
           evidence_to_run,
           100 * (available_one - required_one) / available_one, topology_blocked, notes
    from work_rows
),

api_routes as (
    select workloads.workload_id,
           {{ json_text('route', "'model_key'") }} as model_key,
           {{ json_text('route', "'benchmark_model_id'") }} as benchmark_model_id,
           cast({{ json_text('route', "'quality_acceptance'") }} as double) as route_quality_acceptance,
           -- A workload whose model names no name is served as the route's catalog key says (never a NULL
           -- candidate name, which the blocking checks would refuse for every source).
           coalesce({{ json_text('route', "'model'") }}, workloads.model_name, {{ json_text('route', "'model_key'") }})
               as served_model,
           -- A route naming another model than the workload's cannot borrow today's quality acceptance.
           {{ json_text('route', "'model'") }} is null
               or lower({{ json_text('route', "'model'") }}) = lower(coalesce(workloads.model_name, '')) as same_model
    from workloads,
         {{ lateral_explode(json_object_list(json_member('workloads.benchmark_match', "'api_routes'"))) }} as routes(route)
),

api_bench as (
    select model_id,
           sum(failed) / nullif(sum(produced), 0) as error_rate,
           max(ttft_ms_p95) as ttft_ms_p95,
           max(tpot_ms_p95) as tpot_ms_p95,
           max(e2el_ms_p95) as e2el_ms_p95
    from {{ ref('fct_benchmark_runs') }}
    where tool = 'llmperf' and model_id is not null
    group by model_id
),

spend_mix as (
    -- Today's token mix from the workload's own API spend in its demand month: tokens per produced
    -- output (accepted / production quality acceptance), cached input apart (priced at the cache rate).
    select spend.workload_id,
           sum(spend.input_tokens - coalesce(spend.cached_tokens, 0))
               / (max(demand.today_accepted_outputs) / max(coalesce(quality.quality_acceptance, 1))) as uncached_input_per_output,
           sum(coalesce(spend.cached_tokens, 0))
               / (max(demand.today_accepted_outputs) / max(coalesce(quality.quality_acceptance, 1))) as cached_input_per_output,
           sum(spend.output_tokens)
               / (max(demand.today_accepted_outputs) / max(coalesce(quality.quality_acceptance, 1))) as output_per_output,
           -- Today's failed spend share: what a route without a benchmark of its own is assumed to lose.
           cast(sum(coalesce(spend.failed_cost, 0)) as double) / nullif(cast(sum(spend.cost) as double), 0) as failed_share
    from {{ ref('fct_api_spend_daily') }} as spend
    inner join demand
        on demand.workload_id = spend.workload_id
        and cast(date_trunc('month', spend.day) as date) = cast(demand.today_period as date)
    left join quality on quality.workload_id = spend.workload_id
    where demand.today_accepted_outputs > 0
    group by spend.workload_id
),

api_rows as (
    select
        api_routes.workload_id,
        'api' as route_kind,
        'API ' || prices.provider || ' ' || api_routes.served_model
            || case when {{ regex_search('api_routes.model_key', "'[0-9.]+b-[0-9.]+b'") }}
                    then ' (price tier ' || api_routes.model_key || ')'
                    else ' (' || api_routes.model_key || ')' end as candidate,
        prices.provider,
        cast(null as string) as instance_type, cast(null as string) as gpu_model, cast(null as integer) as gpus_per_instance,
        cast(null as string) as intra_node_interconnect, cast(null as string) as inter_node_network,
        cast(null as bigint) as instances, cast(null as double) as price_per_instance_hour, cast(null as double) as billed_hours,
        demand.monthly_accepted_demand as accepted_outputs,
        coalesce(api_routes.route_quality_acceptance, quality.quality_acceptance, 1) as quality_acceptance,
        case when api_routes.route_quality_acceptance is not null then 'measured'
             when quality.quality_acceptance is not null and api_routes.same_model then 'assumed' else 'missing' end as quality_evidence,
        -- Tokens per response: the registry's request shape, else today's measured mix; neither is a
        -- gap (no cost), never zero tokens.
        case when workloads.mean_input_tokens is not null
                 then (workloads.mean_input_tokens * prices.input_cost_per_1m_tokens
                       + coalesce(workloads.mean_output_tokens, 0) * prices.output_cost_per_1m_tokens) / 1e6
             when spend_mix.workload_id is not null
                 then (spend_mix.uncached_input_per_output * prices.input_cost_per_1m_tokens
                       + spend_mix.cached_input_per_output
                         * coalesce(prices.cache_read_cost_per_1m_tokens, prices.input_cost_per_1m_tokens)
                       + spend_mix.output_per_output * prices.output_cost_per_1m_tokens) / 1e6
        end as cost_per_response,
        case when workloads.mean_input_tokens is not null then 'tokens per response from the registry request shape ('
                 || cast(workloads.mean_input_tokens as string) || ' in, ' || cast(coalesce(workloads.mean_output_tokens, 0) as string) || ' out)'
             when spend_mix.workload_id is not null then 'tokens per output from the API spend of '
                 || cast(demand.today_period as string) || ' (' || cast(round(spend_mix.uncached_input_per_output) as string)
                 || ' input, ' || cast(round(spend_mix.cached_input_per_output) as string) || ' cached, '
                 || cast(round(spend_mix.output_per_output) as string) || ' output per produced output)'
             else 'tokens per response unknown: no request_shape tokens in the registry and no API spend to measure them'
        end as token_basis,
        api_routes.same_model,
        workloads.operating_boundary,
        workloads.unit_of_success,
        coalesce(api_bench.error_rate, spend_mix.failed_share, 0) as error_rate,
        api_bench.ttft_ms_p95, api_bench.tpot_ms_p95, api_bench.e2el_ms_p95 as p95_latency_ms,
        case when api_bench.model_id is null then 'missing'
             -- measured only when the benchmarked model is the served model (separators ignored)
             when instr(replace(replace(replace(replace(lower(api_bench.model_id), '-', ''), '.', ''), '_', ''), '/', ''),
                        replace(replace(replace(lower(reverse(split_part(reverse(api_routes.served_model), '/', 1))), '-', ''), '.', ''), '_', '')) > 0
                 then 'measured'
             else 'analogue' end as latency_evidence,
        api_bench.model_id as bench_model_id,
        api_routes.model_key,
        api_routes.served_model,
        extras.gateway
    from api_routes
    inner join workloads using (workload_id)
    inner join demand using (workload_id)
    inner join (select * from {{ ref('fct_api_prices') }} where valid_to is null) as prices
        on prices.model_key = api_routes.model_key
    left join api_bench on api_bench.model_id = api_routes.benchmark_model_id
    left join quality on quality.workload_id = api_routes.workload_id
    left join spend_mix on spend_mix.workload_id = api_routes.workload_id
    left join extras on extras.workload_id = api_routes.workload_id
),

scope as (
    -- What a compute route does not replace: today's storage, network, serving stack, observability
    -- and platform labour at the month's run-rate (equal scope on both sides of the saving).
    select workload_id,
           today_monthly_cost - today_compute_monthly - today_platform_labor as non_compute_monthly,
           today_platform_labor
    from demand
    where today_monthly_cost is not null
),

candidates as (
    select compute_rows.workload_id, route_kind, candidate, provider, instance_type, gpu_model, gpus_per_instance,
           intra_node_interconnect, inter_node_network, instances, price_per_instance_hour, billed_hours,
           pricing_category,
           -- Cast to DECIMAL, then rounded to 8 decimals there: no binary residue (17461.600000000002)
           -- reaches a money column (rounding the double first would keep it).
           round({{ money('instances * price_per_instance_hour * billed_hours') }}, 8) as gpu_cost,
           round({{ money('instances * price_per_instance_hour * billed_hours * coalesce(failed_share, 0)') }}, 8)
               as failure_loss,
           coalesce(scope.non_compute_monthly, {{ money('0') }}) as storage_network,
           coalesce(scope.today_platform_labor, {{ money('0') }}) as platform_labor,
           accepted_outputs, quality_acceptance, quality_evidence,
           ttft_ms_p95, tpot_ms_p95, p95_latency_ms, memory_margin_raw as memory_margin_pct, sessions_per_replica,
           evidence, latency_evidence, evidence_to_run, topology_blocked, notes
    from compute_rows
    left join scope on scope.workload_id = compute_rows.workload_id
    union all
    select api_rows.workload_id, route_kind, candidate, provider, instance_type, gpu_model, gpus_per_instance,
           intra_node_interconnect, inter_node_network, instances, price_per_instance_hour, billed_hours,
           'per-token',
           round({{ money('accepted_outputs / quality_acceptance * cost_per_response') }}, 8),
           round({{ money('accepted_outputs / quality_acceptance * cost_per_response * error_rate / nullif(1 - error_rate, 0)') }}, 8),
           -- A workload served by an API today keeps its own non-compute scope and labour (equal scope);
           -- one moving off GPUs drops them and takes on the gateway upkeep.
           case when api_scope.workload_id is not null then api_scope.non_compute_monthly else {{ money('0') }} end,
           case when api_scope.workload_id is not null then api_scope.today_platform_labor else {{ money('gateway') }} end,
           accepted_outputs, quality_acceptance, quality_evidence,
           ttft_ms_p95, tpot_ms_p95, p95_latency_ms, cast(null as double), cast(null as integer),
           latency_evidence, latency_evidence,
           nullif(concat_ws('; ',
               case when latency_evidence <> 'measured'
                    then 'llmperf of ' || served_model || ' via ' || provider || ' (TTFT, TPOT and e2e at p95, error rate)' end,
               case when quality_evidence = 'missing'
                    then 'an acceptance eval of ' || served_model || ' on the workload task (' || unit_of_success || ', its acceptance rule)' end
           ), ''),
           false,
           'price from the LiteLLM catalog (' || model_key || '); ' || token_basis || '; latency and error rate '
               || case latency_evidence when 'measured' then 'from llmperf of ' || bench_model_id
                                        when 'analogue' then 'from llmperf of another model (' || bench_model_id || '): analogue'
                                        else 'not benchmarked (error rate assumed as today)' end
               || case when quality_evidence = 'missing' and not same_model then '; another model than today: quality acceptance unmeasured' else '' end
               || case when api_scope.workload_id is not null then '; non-compute scope and labour as today (served by an API today)'
                       else '; platform labour = the gateway upkeep (assumption gateway_monthly)' end
    from api_rows
    left join scope as api_scope
        on api_scope.workload_id = api_rows.workload_id and api_rows.operating_boundary = 'managed API'
),

gated as (
    select
        candidates.*,
        workloads.slo_percentile,
        policies.memory_margin_min_pct,
        -- The quality target: the policy minimum, or today's own production acceptance where that is
        -- lower (a route must be no worse than what the workload accepts today; a coding agent whose
        -- patches are merged 66 % of the time is not held to 90 %).
        least(policies.quality_acceptance_min,
              coalesce(today_quality.today_quality_acceptance, policies.quality_acceptance_min)) as quality_acceptance_min,
        case when route_kind = 'api' then 'n/a'
             when topology_blocked then 'fail'
             when memory_margin_pct is null then 'unknown'
             when memory_margin_pct >= policies.memory_margin_min_pct then 'pass' else 'fail' end as memory_gate,
        case when latency_evidence = 'missing' then 'unknown'
             when (workloads.slo_ttft_ms is not null and ttft_ms_p95 > workloads.slo_ttft_ms)
                  or (workloads.slo_tpot_ms is not null and tpot_ms_p95 > workloads.slo_tpot_ms)
                  or (workloads.slo_e2el_ms is not null and p95_latency_ms > workloads.slo_e2el_ms) then 'fail'
             when (workloads.slo_ttft_ms is not null and ttft_ms_p95 is null)
                  or (workloads.slo_tpot_ms is not null and tpot_ms_p95 is null)
                  or (workloads.slo_e2el_ms is not null and p95_latency_ms is null) then 'unknown'
             else 'pass' end as latency_gate,
        case when quality_evidence = 'missing' then 'unknown'
             when quality_acceptance >= least(policies.quality_acceptance_min,
                                              coalesce(today_quality.today_quality_acceptance, policies.quality_acceptance_min))
                 then 'pass' else 'fail' end as quality_gate,
        workloads.slo_ttft_ms, workloads.slo_tpot_ms, workloads.slo_e2el_ms
    from candidates
    inner join workloads using (workload_id)
    cross join policies
    left join (select workload_id as tq_workload_id, quality_acceptance as today_quality_acceptance from quality) as today_quality
        on today_quality.tq_workload_id = candidates.workload_id
),

judged as (
    select
        gated.*,
        memory_gate in ('pass', 'n/a') and latency_gate = 'pass' and quality_gate = 'pass' as passes_gates,
        memory_gate <> 'fail' and latency_gate <> 'fail' and quality_gate <> 'fail' as no_failed_gate,
        -- Every failed or unmeasured gate names the value beside its target.
        nullif(concat_ws('; ',
            case when topology_blocked then 'topology: the job needs several instances and the network allows no multi-node' end,
            case when route_kind = 'api' and gpu_cost is null
                 then 'not priced: tokens per response unknown (no request_shape tokens in the registry, no API spend)' end,
            case when memory_gate = 'fail' and not topology_blocked then 'memory margin ' || cast(round(memory_margin_pct, 1) as string)
                     || ' % < ' || cast(memory_margin_min_pct as string) || ' % at '
                     || cast(coalesce(sessions_per_replica, 1) as string) || ' session(s) per replica' end,
            case when memory_gate = 'unknown' then 'no memory-fit estimate for this shape' end,
            case when latency_evidence = 'missing' then 'latency not measured: no benchmark of this route' end,
            case when latency_evidence <> 'missing' and slo_ttft_ms is not null and ttft_ms_p95 > slo_ttft_ms
                     then 'TTFT ' || slo_percentile || ' ' || cast(round(ttft_ms_p95) as string) || ' ms > target '
                          || cast(slo_ttft_ms as string) || ' ms' end,
            case when latency_evidence <> 'missing' and slo_ttft_ms is not null and ttft_ms_p95 is null
                     then 'TTFT not measured (target ' || cast(slo_ttft_ms as string) || ' ms)' end,
            case when latency_evidence <> 'missing' and slo_tpot_ms is not null and tpot_ms_p95 > slo_tpot_ms
                     then 'TPOT ' || slo_percentile || ' ' || cast(round(tpot_ms_p95, 1) as string) || ' ms > target '
                          || cast(slo_tpot_ms as string) || ' ms' end,
            case when latency_evidence <> 'missing' and slo_tpot_ms is not null and tpot_ms_p95 is null
                     then 'TPOT not measured (target ' || cast(slo_tpot_ms as string) || ' ms)' end,
            case when latency_evidence <> 'missing' and slo_e2el_ms is not null and p95_latency_ms > slo_e2el_ms
                     then 'e2e ' || slo_percentile || ' ' || cast(round(p95_latency_ms) as string) || ' ms > target '
                          || cast(slo_e2el_ms as string) || ' ms' end,
            case when latency_evidence <> 'missing' and slo_e2el_ms is not null and p95_latency_ms is null
                     then 'e2e not measured (target ' || cast(slo_e2el_ms as string) || ' ms)' end,
            case when quality_gate = 'fail' then 'quality acceptance ' || cast(round(quality_acceptance, 4) as string)
                     || ' < target ' || cast(quality_acceptance_min as string) end,
            case when quality_gate = 'unknown' then 'quality acceptance not measured (target '
                     || cast(quality_acceptance_min as string) || ')' end
        ), '') as failed_gate
    from gated
),

current_rows as (
    select
        demand.workload_id, 'current' as route_kind,
        'today (production ' || cast(demand.today_period as string) || ', month run-rate)' as candidate,
        cast(null as string) as provider, cast(null as string) as instance_type, cast(null as string) as gpu_model,
        cast(null as integer) as gpus_per_instance, cast(null as string) as intra_node_interconnect,
        cast(null as string) as inter_node_network, cast(null as bigint) as instances,
        cast(null as double) as price_per_instance_hour, cast(null as double) as billed_hours,
        'as billed today' as pricing_category,
        cast(null as decimal(38, 12)) as gpu_cost, cast(null as decimal(38, 12)) as failure_loss,
        cast(null as decimal(38, 12)) as storage_network, demand.today_platform_labor as platform_labor,
        demand.monthly_accepted_demand as accepted_outputs,
        quality.quality_acceptance, case when quality.quality_acceptance is null then 'missing' else 'measured' end as quality_evidence,
        cast(null as double) as ttft_ms_p95, cast(null as double) as tpot_ms_p95, cast(null as double) as p95_latency_ms,
        cast(null as double) as memory_margin_pct, cast(null as integer) as sessions_per_replica,
        'measured' as evidence, 'n/a' as latency_evidence, cast(null as string) as evidence_to_run,
        'n/a' as memory_gate, 'n/a' as latency_gate, 'n/a' as quality_gate,
        cast(null as boolean) as passes_gates, cast(null as boolean) as no_failed_gate, cast(null as string) as failed_gate,
        demand.today_monthly_cost as monthly_cost_override,
        'the workload as it runs: all-in cost of ' || demand.demand_basis || ' (fct_workload_unit_cost)' as notes
    from demand
    left join quality using (workload_id)
    where demand.today_monthly_cost is not null
),

sized_workloads as (
    -- A workload served by an API today is sized once one of its API routes could be priced.
    select distinct workload_id from compute_rows where route_kind <> 'today_shape'
    union
    select distinct workload_id from api_rows where operating_boundary = 'managed API' and cost_per_response is not null
),

missing_rows as (
    select
        workloads.workload_id, 'missing_evidence' as route_kind,
        'missing evidence: ' || case
            when workloads.workload_type in ('pre-training', 'full fine-tune', 'lora fine-tune')
                then 'a training run of the workload (GPU-hours to the target eval score) on a GPU in the price catalog'
            when workloads.workload_type in ('image generation', 'video generation')
                then 'a media batch of the workload (renders per GPU-hour and acceptance) on a GPU in the price catalog'
            when workloads.workload_type = 'evaluation' then 'an eval run of the suite (GPU-hours per completed suite) on a GPU in the price catalog'
            when workloads.operating_boundary = 'managed API' then 'llmperf of alternative API routes (benchmark_match.api_routes)'
            else 'a serving benchmark (vLLM/guidellm goodput, TTFT/TPOT at p95) of ' || coalesce(workloads.model_name, 'the model')
        end as candidate,
        cast(null as string) as provider, cast(null as string) as instance_type, cast(null as string) as gpu_model,
        cast(null as integer) as gpus_per_instance, cast(null as string) as intra_node_interconnect,
        cast(null as string) as inter_node_network, cast(null as bigint) as instances,
        cast(null as double) as price_per_instance_hour, cast(null as double) as billed_hours,
        cast(null as string) as pricing_category,
        cast(null as decimal(38, 12)) as gpu_cost, cast(null as decimal(38, 12)) as failure_loss,
        cast(null as decimal(38, 12)) as storage_network, cast(null as decimal(38, 12)) as platform_labor,
        demand.monthly_accepted_demand as accepted_outputs,
        cast(null as double) as quality_acceptance, 'missing' as quality_evidence,
        cast(null as double) as ttft_ms_p95, cast(null as double) as tpot_ms_p95, cast(null as double) as p95_latency_ms,
        cast(null as double) as memory_margin_pct, cast(null as integer) as sessions_per_replica,
        'missing' as evidence, 'missing' as latency_evidence,
        case
            when workloads.workload_type in ('pre-training', 'full fine-tune', 'lora fine-tune')
                then 'a training run of the workload (GPU-hours to the target eval score) on a GPU in the price catalog'
            when workloads.workload_type in ('image generation', 'video generation')
                then 'a media batch of the workload (renders per GPU-hour and acceptance) on a GPU in the price catalog'
            when workloads.workload_type = 'evaluation' then 'an eval run of the suite (GPU-hours per completed suite) on a GPU in the price catalog'
            when workloads.operating_boundary = 'managed API' then 'llmperf of alternative API routes (benchmark_match.api_routes)'
            else 'a serving benchmark (vLLM/guidellm goodput, TTFT/TPOT at p95) of ' || coalesce(workloads.model_name, 'the model')
        end as evidence_to_run,
        'unknown' as memory_gate, 'unknown' as latency_gate, 'unknown' as quality_gate,
        false as passes_gates, true as no_failed_gate,
        'no GPU candidate can be sized without this benchmark (guide Stages 1-3)' as failed_gate,
        cast(null as decimal(38, 12)) as monthly_cost_override,
        coalesce(demand.demand_missing_reason, 'demand: ' || demand.demand_basis) as notes
    from workloads
    inner join demand using (workload_id)
    left join sized_workloads on sized_workloads.workload_id = workloads.workload_id
    where sized_workloads.workload_id is null
),

unioned as (
    select workload_id, route_kind, candidate, provider, instance_type, gpu_model, gpus_per_instance,
           intra_node_interconnect, inter_node_network, instances, price_per_instance_hour, billed_hours,
           pricing_category, gpu_cost, failure_loss, storage_network, platform_labor, accepted_outputs,
           quality_acceptance, quality_evidence, ttft_ms_p95, tpot_ms_p95, p95_latency_ms, memory_margin_pct,
           sessions_per_replica, evidence, latency_evidence, evidence_to_run, memory_gate, latency_gate, quality_gate,
           passes_gates, no_failed_gate, failed_gate, cast(null as decimal(38, 12)) as monthly_cost, notes
    from judged
    union all
    select workload_id, route_kind, candidate, provider, instance_type, gpu_model, gpus_per_instance,
           intra_node_interconnect, inter_node_network, instances, price_per_instance_hour, billed_hours,
           pricing_category, gpu_cost, failure_loss, storage_network, platform_labor, accepted_outputs,
           quality_acceptance, quality_evidence, ttft_ms_p95, tpot_ms_p95, p95_latency_ms, memory_margin_pct,
           sessions_per_replica, evidence, latency_evidence, evidence_to_run, memory_gate, latency_gate, quality_gate,
           passes_gates, no_failed_gate, failed_gate, monthly_cost_override, notes
    from current_rows
    union all
    select workload_id, route_kind, candidate, provider, instance_type, gpu_model, gpus_per_instance,
           intra_node_interconnect, inter_node_network, instances, price_per_instance_hour, billed_hours,
           pricing_category, gpu_cost, failure_loss, storage_network, platform_labor, accepted_outputs,
           quality_acceptance, quality_evidence, ttft_ms_p95, tpot_ms_p95, p95_latency_ms, memory_margin_pct,
           sessions_per_replica, evidence, latency_evidence, evidence_to_run, memory_gate, latency_gate, quality_gate,
           passes_gates, no_failed_gate, failed_gate, monthly_cost_override, notes
    from missing_rows
),

costed as (
    -- Money is summed in DECIMAL: each component is cast once, then added exactly.
    select
        unioned.*,
        coalesce(monthly_cost,
                 {{ money('gpu_cost') }} + {{ money('storage_network') }} + {{ money('platform_labor') }}
                     + {{ money('coalesce(failure_loss, 0)') }}) as total_cost
    from unioned
),

statused as (
    select
        costed.*,
        demand.today_monthly_cost,
        demand.today_unit_cost,
        demand.today_compute_monthly,
        demand.days_observed,
        demand.days_in_month,
        demand.demand_extrapolation,
        case when route_kind = 'current' then 'today'
             when route_kind = 'missing_evidence' then 'missing evidence'
             when route_kind = 'today_shape' then 'back-test'
             -- A route that cannot be priced (an API route without tokens per response) is a gap, never 0.
             when total_cost is null then 'missing evidence'
             when passes_gates and total_cost < demand.today_monthly_cost then 'eligible'
             when passes_gates then 'costs more'
             when no_failed_gate and total_cost < demand.today_monthly_cost then 'eligible pending evidence'
             when no_failed_gate then 'costs more, pending evidence'
             else 'ineligible' end as status
    from costed
    left join demand on demand.workload_id = costed.workload_id
),

final as (
    select
        workload_id, candidate, route_kind, status, evidence, evidence_to_run, provider, instance_type, gpu_model,
        gpus_per_instance,
        instances,
        instances * gpus_per_instance as gpu_count,
        sessions_per_replica,
        intra_node_interconnect, inter_node_network,
        {{ money('round(' ~ money('price_per_instance_hour') ~ ', 8)') }} as price_per_instance_hour,
        round(billed_hours, 2) as billed_hours,
        pricing_category,
        'USD' as currency,
        {{ money('gpu_cost') }} as gpu_cost,
        {{ money('storage_network') }} as storage_network,
        {{ money('platform_labor') }} as platform_labor,
        {{ money('failure_loss') }} as failure_loss,
        {{ money('total_cost') }} as monthly_cost,
        cast(round(accepted_outputs) as bigint) as accepted_outputs,
        days_observed,
        days_in_month,
        demand_extrapolation,
        {{ safe_unit_cost('total_cost', 'round(accepted_outputs)') }} as effective_unit_cost,
        {{ money('today_monthly_cost') }} as today_monthly_cost,
        {{ safe_unit_cost('today_monthly_cost', 'round(accepted_outputs)') }} as today_unit_cost,
        today_unit_cost as today_period_unit_cost,
        {{ money(money('today_monthly_cost') ~ ' - ' ~ money('total_cost')) }} as monthly_savings,
        round(100 * cast(today_monthly_cost - total_cost as double)
              / nullif(cast(today_monthly_cost as double), 0), 1) as savings_pct,
        -- The back-test: today's own instances priced by this model against today's measured run-rate.
        case when route_kind = 'today_shape' then round(100 * cast(total_cost - today_monthly_cost as double)
              / nullif(cast(today_monthly_cost as double), 0), 1) end as backtest_gap_pct,
        case when route_kind = 'today_shape' then
            'compute: predicted ' || cast(round(cast(gpu_cost as double) + coalesce(cast(failure_loss as double), 0), 2) as string)
            || ' (instances x rate x ' || cast(round(billed_hours, 2) as string) || ' h) vs today '
            || cast(round(cast(today_compute_monthly as double), 2) as string)
            || ' (billed GPU, API and waste lines at the run-rate); every other line as billed today' end as backtest_gap_source,
        round(ttft_ms_p95, 1) as ttft_ms_p95,
        round(tpot_ms_p95, 1) as tpot_ms_p95,
        round(p95_latency_ms, 1) as p95_latency_ms,
        slo_ttft_ms, slo_tpot_ms, slo_e2el_ms,
        latency_evidence,
        latency_gate,
        latency_gate = 'pass' as meets_slo,
        round(memory_margin_pct, 1) as memory_margin_pct,
        memory_gate,
        round(quality_acceptance, 4) as quality_acceptance,
        quality_evidence,
        quality_gate,
        -- The gates' targets on every row, so a screen shows each gate as measured vs target.
        gate_targets.memory_margin_min_pct,
        gate_targets.quality_acceptance_min,
        passes_gates,
        -- Eligible = every gate passes and it costs less than today: a costlier route is never chosen.
        case when route_kind in ('current', 'missing_evidence') then cast(null as boolean)
             else status = 'eligible' end as eligible,
        failed_gate,
        case when status = 'eligible' then rank() over (
            partition by workload_id, status order by total_cost, candidate
        ) end as rank,
        -- An offer priced in another currency says so: its native price, the rate and the rate's date.
        case when fx_offers.fx_note is null then notes else notes || fx_offers.fx_note end as notes
    from statused
    left join (
        select provider as fx_provider, instance_type as fx_instance_type, gpus_per_instance as fx_gpus_per_instance,
               '; priced ' || price_currency || ' ' || cast(round(native_price_per_gpu_hour, 4) as string)
                   || ' a GPU-hour, converted at ' || cast(round(fx_rate, 10) as string) || ' (rate of '
                   || cast(fx_rate_date as string) || ')' as fx_note
        from {{ ref('int_decision_instance_offers') }}
        where fx_rate is not null
    ) as fx_offers
        on statused.route_kind = 'gpu' and fx_offers.fx_provider = statused.provider
        and fx_offers.fx_instance_type = statused.instance_type
        and fx_offers.fx_gpus_per_instance = statused.gpus_per_instance
    left join (select workload_id as slo_workload_id, slo_ttft_ms, slo_tpot_ms, slo_e2el_ms from workloads) as slo
        on slo.slo_workload_id = statused.workload_id
    cross join (select memory_margin_min_pct, quality_acceptance_min from policies) as gate_targets
)

select * from final
