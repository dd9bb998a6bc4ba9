-- Stage 4 of the guide, per registry workload: one row per candidate one can actually rent, sized
-- to the workload's production demand and compared with what the workload costs today
-- (docs/cost_model.md, "Stage-4 candidates").
--   route_kind 'current'          today's production cost (fct_workload_unit_cost), the baseline
--   route_kind 'gpu'              whole instances of a rentable shape (int_decision_instance_offers):
--                                 gpu_count = instances x gpus_per_instance, cost = instances x price
--                                 per instance-hour x hours; a tensor-parallel group stays inside one
--                                 instance unless the network allows multi-node (EFA / InfiniBand)
--   route_kind 'api'              a model API route of the registry (benchmark_match.api_routes)
--   route_kind 'missing_evidence' no throughput evidence for GPU candidates: names the benchmark to run
-- Gates: memory margin (fct_memory_fit at production concurrency >= policy threshold), latency SLO
-- (TTFT, TPOT, e2e at the workload percentile) and quality acceptance (>= policy
-- quality_acceptance_min), each with its outcome and evidence label. Only eligible rows are ranked.
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

runs as (
    select runs.*,
           runs.accepted / runs.duration_s * 3600.0 as goodput_per_hour,
           coalesce(runs.failed, 0) / nullif(coalesce(runs.completed, 0) + coalesce(runs.failed, 0), 0) as failed_share,
           runs.accepted >= runs.produced * case when workloads.slo_percentile = 'p99' then 0.99 else 0.95 end as run_meets_slo
    from {{ ref('fct_benchmark_runs') }} as runs
    inner join workloads using (workload_id)
    where runs.gpu_model is not null and runs.gpu_count > 0 and runs.duration_s > 0 and runs.accepted > 0
),

reference as (
    -- The workload's own serving benchmark: the run that met the SLO with latency recorded and the
    -- highest goodput. Its GPU is the measured point the other shapes are projected from.
    select runs.*, gpus.memory_bandwidth_gbs as ref_bandwidth
    from runs
    inner join {{ ref('dim_gpu') }} as gpus on gpus.gpu_model = runs.gpu_model
    qualify row_number() over (
        partition by runs.workload_id
        order by run_meets_slo desc, (ttft_ms_p95 is not null) desc, goodput_per_hour desc, run_id
    ) = 1
),

fit as (
    select workload_id, gpu_model, gpu_count, margin_pct
    from {{ ref('fct_memory_fit') }}
    where is_production_concurrency
),

shapes as (
    select
        reference.workload_id,
        offers.*,
        fit_one.margin_pct as margin_one_instance,
        fit_two.margin_pct as margin_two_instances,
        case when fit_one.margin_pct >= policies.memory_margin_min_pct then 1
             when offers.multi_node_allowed and fit_two.margin_pct >= policies.memory_margin_min_pct then 2
             else 1 end as instances_per_replica,
        reference.run_id, reference.provider as ref_provider, reference.gpu_model as ref_gpu_model,
        reference.gpu_count as ref_gpu_count, reference.ref_bandwidth, reference.goodput_per_hour as ref_goodput,
        reference.failed_share, reference.ttft_ms_p95 as ref_ttft, reference.tpot_ms_p95 as ref_tpot,
        reference.e2el_ms_p95 as ref_e2el
    from reference
    cross join {{ ref('int_decision_instance_offers') }} as offers
    cross join policies
    left join fit as fit_one
        on fit_one.workload_id = reference.workload_id and fit_one.gpu_model = offers.gpu_model
        and fit_one.gpu_count = offers.gpus_per_instance
    left join fit as fit_two
        on fit_two.workload_id = reference.workload_id and fit_two.gpu_model = offers.gpu_model
        and fit_two.gpu_count = 2 * offers.gpus_per_instance and offers.multi_node_allowed
),

gpu_sized as (
    select
        shapes.*,
        instances_per_replica * gpus_per_instance as replica_gpus,
        case when instances_per_replica = 2 then margin_two_instances else margin_one_instance end as memory_margin_pct,
        case when gpu_model = ref_gpu_model and provider = ref_provider and instances_per_replica * gpus_per_instance = ref_gpu_count
                 then 'measured'
             when gpu_model = ref_gpu_model then 'same_gpu'
             else 'projected' end as evidence,
        -- Decode is memory-bandwidth bound: goodput scales with the replica's aggregate bandwidth.
        ref_goodput * (instances_per_replica * gpus_per_instance * memory_bandwidth_gbs)
            / nullif(ref_gpu_count * ref_bandwidth, 0) as goodput_per_replica_hour,
        -- Decode latency scales inversely with the replica's aggregate memory bandwidth (1 when measured).
        (ref_gpu_count * ref_bandwidth) / nullif(instances_per_replica * gpus_per_instance * memory_bandwidth_gbs, 0)
            as latency_scale
    from shapes
),

gpu_rows as (
    select
        gpu_sized.workload_id,
        'gpu' as route_kind,
        gpu_sized.provider || ' ' || instance_type || ' (' || cast(gpus_per_instance as string) || 'x ' || gpu_model
            || ') x' || cast(
                case when workloads.operating_mode = 'always-on'
                     then instances_per_replica * cast(greatest(1, ceil(demand.monthly_accepted_demand
                          / coalesce(quality.quality_acceptance, 1)
                          / (goodput_per_replica_hour * policies.hours_per_month * policies.serving_target_utilisation))) as bigint)
                     else instances_per_replica end as string) as candidate,
        gpu_sized.provider, instance_type, gpu_model, gpus_per_instance, intra_node_interconnect, inter_node_network,
        case when workloads.operating_mode = 'always-on'
             then instances_per_replica * cast(greatest(1, ceil(demand.monthly_accepted_demand
                  / coalesce(quality.quality_acceptance, 1)
                  / (goodput_per_replica_hour * policies.hours_per_month * policies.serving_target_utilisation))) as bigint)
             else instances_per_replica end as instances,
        price_per_instance_hour,
        -- Always-on endpoints are billed every hour; batch/experiment shapes only for the hours the
        -- demand needs at the projected goodput.
        case when workloads.operating_mode = 'always-on' then policies.hours_per_month
             else least(policies.hours_per_month, demand.monthly_accepted_demand / coalesce(quality.quality_acceptance, 1)
                        / goodput_per_replica_hour) end as billed_hours,
        demand.monthly_accepted_demand as accepted_outputs,
        coalesce(quality.quality_acceptance, 1) as quality_acceptance,
        case when quality.quality_acceptance is null then 'missing' else 'assumed' end as quality_evidence,
        failed_share,
        ref_ttft * latency_scale as ttft_ms_p95,
        ref_tpot * latency_scale as tpot_ms_p95,
        ref_e2el * latency_scale as p95_latency_ms,
        memory_margin_pct,
        evidence,
        evidence as latency_evidence,
        extras.storage_network,
        {{ money('coalesce(demand.today_platform_labor, 0)') }} as platform_labor,
        'goodput ' || case when evidence = 'measured' then 'measured (run ' || run_id || ')'
                           else 'projected from run ' || run_id || ' (' || ref_gpu_model || ' x'
                                || cast(ref_gpu_count as string) || ') by memory bandwidth' end
            || '; ' || cast(instances_per_replica as string) || ' instance(s) per replica'
            || case when instances_per_replica = 2 then ' over ' || inter_node_network || ' (multi-node)' else '' end
            || '; interconnect ' || intra_node_interconnect || '; network ' || inter_node_network
            || '; quality acceptance assumed from production (same model and precision)' as notes
    from gpu_sized
    inner join workloads using (workload_id)
    inner join demand using (workload_id)
    cross join policies
    left join quality using (workload_id)
    left join extras using (workload_id)
    where goodput_per_replica_hour > 0 and demand.monthly_accepted_demand is not null
),

api_routes as (
    select workloads.workload_id,
           {{ json_text('route', "'model_key'") }} as model_key,
           {{ json_text('route', "'benchmark_model_id'") }} as benchmark_model_id,
           cast({{ json_text('route', "'quality_acceptance'") }} as double) as route_quality_acceptance,
           coalesce({{ json_text('route', "'model'") }}, workloads.model_name) as served_model
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
             when quality.quality_acceptance is not null then 'assumed' else 'missing' end as quality_evidence,
        (coalesce(workloads.mean_input_tokens, 0) * prices.input_cost_per_1m_tokens
            + coalesce(workloads.mean_output_tokens, 0) * prices.output_cost_per_1m_tokens) / 1e6 as cost_per_response,
        coalesce(api_bench.error_rate, 0) as error_rate,
        api_bench.ttft_ms_p95, api_bench.tpot_ms_p95, api_bench.e2el_ms_p95 as p95_latency_ms,
        case when api_bench.model_id is null then 'missing'
             -- measured only when the benchmarked model is the served model (separators ignored)
             when instr(replace(replace(replace(replace(lower(api_bench.model_id), '-', ''), '.', ''), '_', ''), '/', ''),
                        replace(replace(replace(lower(reverse(split_part(reverse(api_routes.served_model), '/', 1))), '-', ''), '.', ''), '_', '')) > 0
                 then 'measured'
             else 'analogue' end as latency_evidence,
        api_bench.model_id as bench_model_id,
        api_routes.model_key,
        extras.gateway
    from api_routes
    inner join workloads using (workload_id)
    inner join demand using (workload_id)
    inner join (select * from {{ ref('fct_api_prices') }} where valid_to is null) as prices
        on prices.model_key = api_routes.model_key
    left join api_bench on api_bench.model_id = api_routes.benchmark_model_id
    left join quality on quality.workload_id = api_routes.workload_id
    left join extras on extras.workload_id = api_routes.workload_id
),

candidates as (
    select workload_id, route_kind, candidate, provider, instance_type, gpu_model, gpus_per_instance,
           intra_node_interconnect, inter_node_network, instances, price_per_instance_hour, billed_hours,
           'on-demand' as pricing_category,
           instances * price_per_instance_hour * billed_hours as gpu_cost,
           instances * price_per_instance_hour * billed_hours * coalesce(failed_share, 0) as failure_loss,
           storage_network, platform_labor, accepted_outputs, quality_acceptance, quality_evidence,
           ttft_ms_p95, tpot_ms_p95, p95_latency_ms, memory_margin_pct, evidence, latency_evidence, notes
    from gpu_rows
    union all
    select workload_id, route_kind, candidate, provider, instance_type, gpu_model, gpus_per_instance,
           intra_node_interconnect, inter_node_network, instances, price_per_instance_hour, billed_hours,
           'per-token',
           accepted_outputs / quality_acceptance * cost_per_response,
           accepted_outputs / quality_acceptance * cost_per_response * error_rate / nullif(1 - error_rate, 0),
           0, {{ money('gateway') }}, accepted_outputs, quality_acceptance, quality_evidence,
           ttft_ms_p95, tpot_ms_p95, p95_latency_ms, cast(null as double), latency_evidence, latency_evidence,
           'price from the LiteLLM catalog (' || model_key || '); latency and error rate '
               || case latency_evidence when 'measured' then 'from llmperf of ' || bench_model_id
                                        when 'analogue' then 'from llmperf of another model (' || bench_model_id || '): analogue'
                                        else 'not benchmarked' end
               || '; platform labour = the gateway upkeep (assumption gateway_monthly)'
    from api_rows
),

gated as (
    select
        candidates.*,
        workloads.slo_percentile,
        policies.memory_margin_min_pct,
        policies.quality_acceptance_min,
        case when route_kind = 'api' then 'n/a'
             when memory_margin_pct is null then 'unknown'
             when memory_margin_pct >= policies.memory_margin_min_pct then 'pass' else 'fail' end as memory_gate,
        case when latency_evidence = 'missing' then 'unknown'
             when workloads.slo_ttft_ms is null and workloads.slo_tpot_ms is null and workloads.slo_e2el_ms is null then 'pass'
             when (workloads.slo_ttft_ms is not null and ttft_ms_p95 is null)
                  or (workloads.slo_tpot_ms is not null and tpot_ms_p95 is null)
                  or (workloads.slo_e2el_ms is not null and p95_latency_ms is null) then 'unknown'
             when coalesce(ttft_ms_p95 <= workloads.slo_ttft_ms, true) and coalesce(tpot_ms_p95 <= workloads.slo_tpot_ms, true)
                  and coalesce(p95_latency_ms <= workloads.slo_e2el_ms, true) then 'pass'
             else 'fail' end as latency_gate,
        case when quality_evidence = 'missing' then 'unknown'
             when quality_acceptance >= policies.quality_acceptance_min then 'pass' else 'fail' end as quality_gate,
        workloads.slo_ttft_ms, workloads.slo_tpot_ms, workloads.slo_e2el_ms
    from candidates
    inner join workloads using (workload_id)
    cross join policies
),

judged as (
    select
        gated.*,
        memory_gate in ('pass', 'n/a') and latency_gate = 'pass' and quality_gate = 'pass' as eligible,
        nullif(concat_ws('; ',
            case when memory_gate = 'fail' then 'memory margin ' || cast(round(memory_margin_pct, 1) as string)
                     || ' % < ' || cast(memory_margin_min_pct as string) || ' %' end,
            case when memory_gate = 'unknown' then 'no memory-fit estimate for this shape' end,
            case when latency_gate = 'fail' then 'latency SLO (' || slo_percentile || '): TTFT '
                     || coalesce(cast(round(ttft_ms_p95) as string), '?') || '/' || coalesce(cast(slo_ttft_ms as string), '-')
                     || ' ms, TPOT ' || coalesce(cast(round(tpot_ms_p95, 1) as string), '?') || '/' || coalesce(cast(slo_tpot_ms as string), '-')
                     || ' ms, e2e ' || coalesce(cast(round(p95_latency_ms) as string), '?') || '/' || coalesce(cast(slo_e2el_ms as string), '-') || ' ms' end,
            case when latency_gate = 'unknown' then 'latency evidence missing: '
                     || case when latency_evidence = 'missing' then 'no benchmark of this route'
                             else concat_ws(', ',
                                 case when slo_ttft_ms is not null and ttft_ms_p95 is null then 'TTFT' end,
                                 case when slo_tpot_ms is not null and tpot_ms_p95 is null then 'TPOT' end,
                                 case when slo_e2el_ms is not null and p95_latency_ms is null then 'e2e' end)
                                  || ' not measured' end end,
            case when quality_gate = 'fail' then 'quality acceptance ' || cast(round(quality_acceptance, 4) as string)
                     || ' < ' || cast(quality_acceptance_min as string) end,
            case when quality_gate = 'unknown' then 'quality acceptance not measured' end
        ), '') as failed_gate
    from gated
),

current_rows as (
    select
        demand.workload_id, 'current' as route_kind,
        'today (production ' || cast(demand.today_period as string) || ')' as candidate,
        cast(null as string) as provider, cast(null as string) as instance_type, cast(null as string) as gpu_model,
        cast(null as integer) as gpus_per_instance, cast(null as string) as intra_node_interconnect,
        cast(null as string) as inter_node_network, cast(null as bigint) as instances,
        cast(null as double) as price_per_instance_hour, cast(null as double) as billed_hours,
        'as billed today' as pricing_category,
        cast(null as double) as gpu_cost, cast(null as double) as failure_loss, cast(null as double) as storage_network,
        cast(null as decimal(38, 12)) as platform_labor, demand.monthly_accepted_demand as accepted_outputs,
        quality.quality_acceptance, case when quality.quality_acceptance is null then 'missing' else 'measured' end as quality_evidence,
        cast(null as double) as ttft_ms_p95, cast(null as double) as tpot_ms_p95, cast(null as double) as p95_latency_ms,
        cast(null as double) as memory_margin_pct, 'measured' as evidence, 'n/a' as latency_evidence,
        'n/a' as memory_gate, 'n/a' as latency_gate, 'n/a' as quality_gate,
        cast(null as boolean) as eligible, cast(null as string) as failed_gate,
        {{ money('demand.today_monthly_cost') }} as monthly_cost_override,
        'the workload as it runs: all-in cost of ' || demand.demand_basis || ' (fct_workload_unit_cost)' as notes
    from demand
    left join quality using (workload_id)
    where demand.today_monthly_cost is not null
),

missing_rows as (
    select
        workloads.workload_id, 'missing_evidence' as route_kind,
        'missing evidence: ' || case
            when workloads.workload_type in ('pre-training', 'full fine-tune', 'lora fine-tune')
                then 'training throughput per GPU (tokens/s/GPU, time to target) on candidate instances'
            when workloads.workload_type in ('image generation', 'video generation')
                then 'renders per GPU-hour and acceptance on candidate instances'
            when workloads.workload_type = 'evaluation' then 'eval suite GPU-hours per completed suite on candidate instances'
            when workloads.operating_boundary = 'managed API' then 'llmperf of alternative API routes (benchmark_match.api_routes)'
            else 'a serving benchmark (vLLM/guidellm goodput, TTFT/TPOT at p95) of ' || coalesce(workloads.model_name, 'the model')
        end as candidate,
        cast(null as string) as provider, cast(null as string) as instance_type, cast(null as string) as gpu_model,
        cast(null as integer) as gpus_per_instance, cast(null as string) as intra_node_interconnect,
        cast(null as string) as inter_node_network, cast(null as bigint) as instances,
        cast(null as double) as price_per_instance_hour, cast(null as double) as billed_hours,
        cast(null as string) as pricing_category,
        cast(null as double) as gpu_cost, cast(null as double) as failure_loss, cast(null as double) as storage_network,
        cast(null as decimal(38, 12)) as platform_labor, demand.monthly_accepted_demand as accepted_outputs,
        cast(null as double) as quality_acceptance, 'missing' as quality_evidence,
        cast(null as double) as ttft_ms_p95, cast(null as double) as tpot_ms_p95, cast(null as double) as p95_latency_ms,
        cast(null as double) as memory_margin_pct, 'missing' as evidence, 'missing' as latency_evidence,
        'unknown' as memory_gate, 'unknown' as latency_gate, 'unknown' as quality_gate,
        false as eligible,
        'no GPU candidate can be sized without this benchmark (guide Stages 1-3)' as failed_gate,
        cast(null as decimal(38, 12)) as monthly_cost_override,
        coalesce(demand.demand_missing_reason, 'demand: ' || demand.demand_basis) as notes
    from workloads
    inner join demand using (workload_id)
    where not exists (select 1 from gpu_rows where gpu_rows.workload_id = workloads.workload_id)
),

unioned as (
    select workload_id, route_kind, candidate, provider, instance_type, gpu_model, gpus_per_instance,
           intra_node_interconnect, inter_node_network, instances, price_per_instance_hour, billed_hours,
           pricing_category, gpu_cost, failure_loss, storage_network, platform_labor, accepted_outputs,
           quality_acceptance, quality_evidence, ttft_ms_p95, tpot_ms_p95, p95_latency_ms, memory_margin_pct,
           evidence, latency_evidence, memory_gate, latency_gate, quality_gate, eligible, failed_gate,
           cast(null as decimal(38, 12)) as monthly_cost, notes
    from judged
    union all
    select workload_id, route_kind, candidate, provider, instance_type, gpu_model, gpus_per_instance,
           intra_node_interconnect, inter_node_network, instances, price_per_instance_hour, billed_hours,
           pricing_category, gpu_cost, failure_loss, storage_network, platform_labor, accepted_outputs,
           quality_acceptance, quality_evidence, ttft_ms_p95, tpot_ms_p95, p95_latency_ms, memory_margin_pct,
           evidence, latency_evidence, memory_gate, latency_gate, quality_gate, eligible, failed_gate,
           monthly_cost_override, notes
    from current_rows
    union all
    select workload_id, route_kind, candidate, provider, instance_type, gpu_model, gpus_per_instance,
           intra_node_interconnect, inter_node_network, instances, price_per_instance_hour, billed_hours,
           pricing_category, gpu_cost, failure_loss, storage_network, platform_labor, accepted_outputs,
           quality_acceptance, quality_evidence, ttft_ms_p95, tpot_ms_p95, p95_latency_ms, memory_margin_pct,
           evidence, latency_evidence, memory_gate, latency_gate, quality_gate, eligible, failed_gate,
           monthly_cost_override, notes
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

final as (
    select
        costed.workload_id, candidate, route_kind, evidence, provider, instance_type, gpu_model, gpus_per_instance,
        instances,
        instances * gpus_per_instance as gpu_count,
        intra_node_interconnect, inter_node_network,
        {{ money('price_per_instance_hour') }} as price_per_instance_hour,
        round(billed_hours, 2) as billed_hours,
        pricing_category,
        'USD' as currency,
        {{ money('gpu_cost') }} as gpu_cost,
        {{ money('storage_network') }} as storage_network,
        {{ money('platform_labor') }} as platform_labor,
        {{ money('failure_loss') }} as failure_loss,
        {{ money('total_cost') }} as monthly_cost,
        cast(round(accepted_outputs) as bigint) as accepted_outputs,
        {{ safe_unit_cost('total_cost', 'round(accepted_outputs)') }} as effective_unit_cost,
        {{ money('demand.today_monthly_cost') }} as today_monthly_cost,
        demand.today_unit_cost,
        {{ money(money('demand.today_monthly_cost') ~ ' - ' ~ money('total_cost')) }} as monthly_savings,
        round(100 * cast(demand.today_monthly_cost - total_cost as double)
              / nullif(cast(demand.today_monthly_cost as double), 0), 1) as savings_pct,
        round(ttft_ms_p95, 1) as ttft_ms_p95,
        round(tpot_ms_p95, 1) as tpot_ms_p95,
        round(p95_latency_ms, 1) as p95_latency_ms,
        latency_evidence,
        latency_gate,
        latency_gate = 'pass' as meets_slo,
        memory_margin_pct,
        memory_gate,
        round(quality_acceptance, 4) as quality_acceptance,
        quality_evidence,
        quality_gate,
        eligible,
        failed_gate,
        case when eligible then rank() over (
            partition by costed.workload_id, coalesce(eligible, false) order by total_cost
        ) end as rank,
        notes
    from costed
    left join demand on demand.workload_id = costed.workload_id
)

select * from final
