-- Stage 4 of the guide: for each workload, one row per candidate (a GPU offer, or an API route)
-- normalised to the workload's monthly accepted-output demand, with GPU cost, storage/network,
-- platform labour, failure loss, accepted outputs and the effective unit cost, p95 latency,
-- memory margin (fct_memory_fit at production concurrency, or the measured test) and quality acceptance. Rows are `measured` where a benchmark of that candidate
-- exists and `projected` (labelled, with the method) where not; ranked by effective unit cost
-- among candidates that meet the SLO.
with workloads as (
    select * from {{ ref('stg_registry__workloads') }}
),

policies as (
    select * from {{ ref('int_cost_policies') }}
),

target as (
    select coalesce((select cast({{ json_scalar_text('value') }} as double) from {{ ref('stg_registry__policies') }}
                     where policy = 'serving_target_utilisation'), 0.6) as utilisation
),

gpus as (
    select * from {{ ref('dim_gpu') }}
),

quality as (
    -- Monthly demand in accepted outputs, and the share the quality filter accepts, from production.
    select workload_id,
           sum(accepted) / count(distinct day) * 30.4 as monthly_accepted_demand,
           sum(accepted) / nullif(sum(produced), 0) as quality_acceptance
    from {{ ref('stg_benchmarks__quality_outcomes') }}
    group by all
),

runs as (
    select runs.*,
           runs.accepted / runs.duration_s * 3600.0 as goodput_per_hour,
           coalesce(runs.failed, 0) / nullif(coalesce(runs.completed, 0) + coalesce(runs.failed, 0), 0) as failed_share,
           runs.accepted >= runs.produced * case when workloads.slo_percentile = 'p99' then 0.99 else 0.95 end as meets_slo
    from {{ ref('fct_benchmark_runs') }} as runs
    inner join workloads using (workload_id)
    where runs.gpu_model is not null and runs.gpu_count > 0 and runs.duration_s > 0 and runs.accepted > 0
),

best_measured as (
    -- Per workload and hardware, the load level with the most SLO-accepted requests per hour.
    select *
    from runs
    qualify row_number() over (
        partition by workload_id, provider, gpu_model, gpu_count
        order by meets_slo desc, goodput_per_hour desc, run_id
    ) = 1
),

reference as (
    select best_measured.*, gpus.memory_bandwidth_gbs as ref_bandwidth
    from best_measured
    left join gpus on gpus.gpu_model = best_measured.gpu_model
    qualify row_number() over (partition by workload_id order by meets_slo desc, goodput_per_hour desc) = 1
),

fit as (
    -- Memory fit at the workload's production concurrency (fct_memory_fit): the fewest GPUs that fit.
    select workload_id, gpu_model, gpu_count, margin_pct
    from {{ ref('fct_memory_fit') }}
    where fit_status <> 'does not fit'
    qualify concurrency = max(concurrency) over (partition by workload_id)
),

offers as (
    -- The cheapest current, still listed on-demand USD offer per GPU model (whole GPUs only).
    select provider, sku, region, gpu_model, price_per_gpu_hour
    from {{ ref('fct_gpu_offers_current') }}
    where pricing_category = 'on-demand' and currency = 'USD' and not coalesce(is_partial_gpu, false)
        and is_listed and price_per_gpu_hour > 0
    qualify row_number() over (partition by gpu_model order by price_per_gpu_hour, provider, sku, region) = 1
),

gpu_candidates as (
    select
        reference.workload_id,
        case when offers.gpu_model = reference.gpu_model then 'measured' else 'projected' end as basis,
        'gpu' as route_kind,
        offers.provider, offers.sku, offers.gpu_model,
        -- The benchmarked count for the measured GPU; otherwise the fewest GPUs that fit the model
        -- and its KV cache at production concurrency.
        case when offers.gpu_model = reference.gpu_model then reference.gpu_count
             else (select min(fit.gpu_count) from fit
                   where fit.workload_id = reference.workload_id and fit.gpu_model = offers.gpu_model) end as gpu_count,
        'on-demand' as pricing_category,
        offers.price_per_gpu_hour,
        gpus.memory_gb, gpus.memory_bandwidth_gbs,
        reference.goodput_per_hour as ref_goodput_per_hour,
        reference.gpu_count as ref_gpu_count,
        reference.ref_bandwidth,
        reference.failed_share,
        reference.e2el_ms_p95 as ref_e2el_ms_p95,
        reference.ttft_ms_p95 as ref_ttft_ms_p95,
        reference.meets_slo as ref_meets_slo,
        reference.memory_margin_pct as ref_memory_margin_pct,
        reference.run_id
    from reference
    inner join workloads using (workload_id)
    cross join offers
    inner join gpus on gpus.gpu_model = offers.gpu_model
    where workloads.model_params_b is not null
),

gpu_rows as (
    select
        gpu_candidates.*,
        -- Decode is memory-bandwidth bound: goodput scales with aggregate bandwidth (projection).
        ref_goodput_per_hour * (gpu_count * memory_bandwidth_gbs) / nullif(ref_gpu_count * ref_bandwidth, 0)
            as goodput_per_hour,
        case when basis = 'measured' then ref_e2el_ms_p95
             else ref_e2el_ms_p95 * ref_bandwidth / nullif(memory_bandwidth_gbs, 0) end as p95_latency_ms,
        coalesce(case when basis = 'measured' then ref_memory_margin_pct end,
                 (select max(fit.margin_pct) from fit where fit.workload_id = gpu_candidates.workload_id
                    and fit.gpu_model = gpu_candidates.gpu_model and fit.gpu_count = gpu_candidates.gpu_count))
            as memory_margin_pct,
        case when basis = 'measured' then ref_meets_slo
             when memory_bandwidth_gbs >= ref_bandwidth then ref_meets_slo
        end as meets_slo
    from gpu_candidates
    inner join workloads using (workload_id)
    where gpu_count is not null
),

gpu_costed as (
    select
        gpu_rows.workload_id, basis, route_kind, provider || ' ' || gpu_model || ' x' || cast(gpu_count as string)
            || ' (' || sku || ')' as candidate,
        provider, gpu_model, gpu_count, pricing_category,
        coalesce(quality.monthly_accepted_demand, goodput_per_hour * 730 * target.utilisation) as accepted_outputs,
        coalesce(quality.quality_acceptance, 1) as quality_acceptance,
        -- whole replicas (ceil is a DOUBLE on DuckDB, a BIGINT on Spark: typed here)
        cast(greatest(1, ceil(
            coalesce(quality.monthly_accepted_demand, goodput_per_hour * 730 * target.utilisation)
            / coalesce(quality.quality_acceptance, 1) / (goodput_per_hour * 730 * target.utilisation)
        )) as bigint) as replicas,
        price_per_gpu_hour, failed_share, p95_latency_ms, memory_margin_pct, meets_slo, run_id
    from gpu_rows
    cross join target
    left join quality using (workload_id)
    where goodput_per_hour > 0
),

api_routes as (
    select workloads.workload_id,
           {{ json_text('route', "'model_key'") }} as model_key,
           {{ json_text('route', "'benchmark_model_id'") }} as benchmark_model_id
    from workloads,
         {{ lateral_explode(json_object_list(json_member('workloads.benchmark_match', "'api_routes'"))) }} as routes(route)
),

api_prices as (
    select * from {{ ref('fct_api_prices') }} where valid_to is null
),

api_bench as (
    select model_id,
           sum(failed) / nullif(sum(produced), 0) as error_rate,
           max(ttft_ms_p95) as ttft_ms_p95,
           max(e2el_ms_p95) as e2el_ms_p95
    from {{ ref('fct_benchmark_runs') }}
    where tool = 'llmperf'
    group by all
),

api_rows as (
    select
        api_routes.workload_id,
        case when api_bench.model_id is not null then 'measured' else 'projected' end as basis,
        'api' as route_kind,
        'API ' || api_routes.model_key as candidate,
        api_prices.provider,
        cast(null as string) as gpu_model, cast(null as integer) as gpu_count, 'per-token' as pricing_category,
        coalesce(quality.monthly_accepted_demand, 0) as accepted_outputs,
        coalesce(quality.quality_acceptance, 1) as quality_acceptance,
        (coalesce(workloads.mean_input_tokens, 0) * api_prices.input_cost_per_1m_tokens
            + coalesce(workloads.mean_output_tokens, 0) * api_prices.output_cost_per_1m_tokens) / 1e6 as cost_per_response,
        coalesce(api_bench.error_rate, 0) as error_rate,
        api_bench.e2el_ms_p95 as p95_latency_ms,
        api_bench.ttft_ms_p95,
        case when api_bench.model_id is null then null
             else coalesce(api_bench.ttft_ms_p95 <= workloads.slo_ttft_ms, true)
                  and coalesce(api_bench.e2el_ms_p95 <= workloads.slo_e2el_ms, true) end as meets_slo
    from api_routes
    inner join workloads using (workload_id)
    inner join api_prices on api_prices.model_key = api_routes.model_key
    left join api_bench on api_bench.model_id = api_routes.benchmark_model_id
    left join quality on quality.workload_id = api_routes.workload_id
),

monthly_extras as (
    select workload_id,
           coalesce(cast({{ json_text('assumptions', "'storage_monthly'") }} as double), 0)
               + coalesce(cast({{ json_text('assumptions', "'network_monthly'") }} as double), 0) as storage_network,
           coalesce(cast({{ json_text('assumptions', "'serving_stack_monthly'") }} as double), 0) as serving_stack,
           coalesce(cast({{ json_text('assumptions', "'gateway_monthly'") }} as double), 150) as gateway
    from workloads
),

labour as (
    -- Self-hosting carries the platform labour the workload bears today (latest production month);
    -- an API route carries only its gateway upkeep (the guide's "lower ops estimate").
    select workload_id, max_by(platform_labor, period) as platform_labor
    from {{ ref('fct_workload_unit_cost') }}
    where basis = 'production'
    group by all
),

combined as (
    select workload_id, basis, route_kind, candidate, provider, gpu_model, gpu_count, pricing_category,
           accepted_outputs, quality_acceptance,
           replicas * gpu_count * price_per_gpu_hour * 730 as gpu_cost,
           replicas * gpu_count * price_per_gpu_hour * 730 * failed_share as failure_loss,
           monthly_extras.storage_network + monthly_extras.serving_stack as storage_network,
           coalesce(cast(labour.platform_labor as double), 0) as platform_labor,
           p95_latency_ms, memory_margin_pct, meets_slo,
           'replicas ' || cast(replicas as string) || ' at ' || cast(round(price_per_gpu_hour, 4) as string)
               || ' $/GPU-h; goodput ' || case when basis = 'measured' then 'measured (run ' || run_id || ')'
                                               else 'projected from run ' || run_id || ' by memory bandwidth' end as notes
    from gpu_costed
    left join monthly_extras using (workload_id)
    left join labour using (workload_id)
    union all
    select workload_id, basis, route_kind, candidate, provider, gpu_model, gpu_count, pricing_category,
           accepted_outputs, quality_acceptance,
           accepted_outputs / quality_acceptance * cost_per_response as gpu_cost,
           accepted_outputs / quality_acceptance * cost_per_response * error_rate / nullif(1 - error_rate, 0) as failure_loss,
           0 as storage_network,
           monthly_extras.gateway as platform_labor,
           p95_latency_ms, cast(null as double) as memory_margin_pct, meets_slo,
           case when basis = 'measured' then 'latency and error rate from llmperf; price from the LiteLLM catalog'
                else 'price from the LiteLLM catalog; no benchmark of this route: SLO unknown' end
    from api_rows
    left join monthly_extras using (workload_id)
),

final as (
    select
        workload_id, candidate, route_kind, basis, provider, gpu_model, gpu_count, pricing_category,
        'USD' as currency,
        {{ money('gpu_cost') }} as gpu_cost,
        {{ money('storage_network') }} as storage_network,
        {{ money('platform_labor') }} as platform_labor,
        {{ money('coalesce(failure_loss, 0)') }} as failure_loss,
        cast(round(accepted_outputs) as bigint) as accepted_outputs,
        {{ money('gpu_cost + storage_network + platform_labor + coalesce(failure_loss, 0)') }} as monthly_cost,
        {{ safe_unit_cost('gpu_cost + storage_network + platform_labor + coalesce(failure_loss, 0)', 'round(accepted_outputs)') }}
            as effective_unit_cost,
        round(p95_latency_ms, 1) as p95_latency_ms,
        memory_margin_pct,
        round(quality_acceptance, 4) as quality_acceptance,
        meets_slo,
        case when meets_slo then rank() over (
            partition by workload_id, meets_slo
            order by gpu_cost + storage_network + platform_labor + coalesce(failure_loss, 0)
        ) end as rank,
        notes
    from combined
)

select * from final
