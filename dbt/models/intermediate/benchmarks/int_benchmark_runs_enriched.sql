-- One row per benchmark run with its hardware, workload, candidate label and physics floors.
-- Hardware: a vLLM result carries none; its `.commands.json` sidecar (same file stem) gives the VM
-- SKU x count and TP/PP. The SKU is resolved through the instance_gpu_map seed (canonical GPU and
-- GPUs per VM; the same instance catalogue the parsers resolved it with); otherwise the GPU named in the file, through the gpu_aliases seed, else the
-- canonical_gpu_model name rules (staging). Workload: the registry workload whose
-- benchmark_match.model_id equals the run's model (case-insensitive); none or several -> null.
-- vLLM nightly-table rows that repeat a per-run result file (its stem ends with the table's test
-- name) are dropped: the per-run file has the date and model the table lacks.
with runs as (
    select * from {{ ref('stg_benchmarks__runs') }}
),

commands as (
    select * from {{ ref('stg_benchmarks__run_commands') }}
),

workloads as (
    select
        workload_id,
        team_id,
        workload_type,
        slo_percentile,
        slo_ttft_ms,
        slo_tpot_ms,
        slo_e2el_ms,
        model_params_b,
        precision,
        context_window,
        lower({{ json_text('benchmark_match', "'model_id'") }}) as match_model_id,
        lower({{ json_text('benchmark_match', "'memory_fit_model_id'") }}) as memory_fit_model_id
    from {{ ref('stg_registry__workloads') }}
),

instance_map as (
    select lower(sku) as sku, any_value(provider) as cloud, any_value(gpu_model) as gpu_model,
           any_value(cast(gpu_count as double)) as gpus_per_vm
    from {{ ref('instance_gpu_map') }}
    -- machines only: price-list ids and per-GPU offer names (sku_kind price_id / gpu) are no VM
    where sku_kind = 'instance'
    group by lower(sku)
    having count(distinct gpu_model) = 1
),

catalog as (
    select * from {{ ref('gpu_catalog') }}
),

per_run_files as (
    select lower(result_file_stem) as stem from runs where source_format = 'vllm_serving_result'
),

runs_kept as (
    select runs.*
    from runs
    where not (
        runs.source_format = 'vllm_nightly_table'
        and exists (select 1 from per_run_files where right(per_run_files.stem, length(runs.run_label)) = lower(runs.run_label))
    )
),

workload_match as (
    select
        runs_kept.run_id,
        count(*) as workload_match_count,
        case when count(*) = 1 then any_value(workloads.workload_id) end as workload_id
    from runs_kept
    inner join workloads on lower(runs_kept.model_id) = workloads.match_model_id
    group by runs_kept.run_id
),

hardware as (
    select
        runs_kept.*,
        coalesce(commands.vm_sku, runs_kept.vm_sku) as run_vm_sku,
        coalesce(commands.vm_count, runs_kept.vm_count) as run_vm_count,
        coalesce(commands.gpu_model_as_written, runs_kept.gpu_model_as_written) as named_gpu_model_as_written,
        coalesce(commands.gpu_model, runs_kept.gpu_model) as named_gpu_model,
        coalesce(commands.gpu_count, runs_kept.gpu_count, runs_kept.accelerators_total) as named_gpu_count,
        coalesce(commands.tensor_parallel, runs_kept.tensor_parallel,
                 try_cast(nullif(regexp_extract(runs_kept.result_file_stem, '(^|[_./-])tp([0-9]+)([_.-]|$)', 2), '') as bigint))
            as run_tensor_parallel,
        coalesce(commands.pipeline_parallel, runs_kept.pipeline_parallel,
                 try_cast(nullif(regexp_extract(runs_kept.result_file_stem, '(^|[_./-])pp([0-9]+)([_.-]|$)', 2), '') as bigint))
            as run_pipeline_parallel,
        commands.network,
        commands.client_command
    from runs_kept
    left join commands on runs_kept.result_file_stem = commands.result_file_stem
),

resolved as (
    select
        hardware.*,
        instance_map.cloud,
        coalesce(instance_map.gpu_model, aliases.gpu_model, hardware.named_gpu_model) as resolved_gpu_model,
        coalesce(instance_map.gpus_per_vm * coalesce(hardware.run_vm_count, 1), cast(hardware.named_gpu_count as double))
            as resolved_gpu_count
    from hardware
    left join instance_map on lower(hardware.run_vm_sku) = instance_map.sku
    {{ join_gpu_alias('hardware.named_gpu_model_as_written') }}
),

final as (
    select
        resolved.run_id,
        resolved.tool,
        resolved.tool_version,
        resolved.source_format,
        resolved.run_label,
        resolved.result_file_stem,
        resolved.run_started_at,
        resolved.duration_s,
        resolved.model_id,
        resolved.backend_or_provider,
        coalesce(resolved.cloud, resolved.backend_or_provider) as provider,
        case
            when resolved.run_vm_sku is not null
                then coalesce(resolved.cloud, resolved.backend_or_provider, '(unknown)') || ' / ' || resolved.run_vm_sku
                     || ' x ' || cast(coalesce(resolved.run_vm_count, 1) as string)
            when resolved.hardware is not null
                then coalesce(resolved.backend_or_provider, '(unknown)') || ' / ' || resolved.hardware
            else coalesce(resolved.backend_or_provider, resolved.tool) || ' / ' || coalesce(resolved.model_id, '(unknown model)')
        end as candidate,
        resolved.hardware,
        resolved.run_vm_sku as vm_sku,
        resolved.run_vm_count as vm_count,
        resolved.network,
        resolved.named_gpu_model_as_written as gpu_model_as_written,
        resolved.resolved_gpu_model as gpu_model,
        resolved.resolved_gpu_count as gpu_count,
        resolved.run_tensor_parallel as tensor_parallel,
        resolved.run_pipeline_parallel as pipeline_parallel,
        resolved.request_rate,
        resolved.request_rate_label,
        resolved.max_concurrency,
        resolved.num_prompts,
        resolved.completed,
        resolved.failed,
        resolved.has_per_request,
        resolved.client_command,
        coalesce(workload_match.workload_match_count, 0) as workload_match_count,
        workloads.workload_id,
        workloads.team_id,
        workloads.workload_type,
        workloads.slo_percentile,
        workloads.slo_ttft_ms,
        workloads.slo_tpot_ms,
        workloads.slo_e2el_ms,
        workloads.model_params_b,
        workloads.precision as model_precision,
        workloads.context_window,
        workloads.memory_fit_model_id,
        catalog.memory_bandwidth_gbs,
        case when workloads.precision = 'fp8' and catalog.fp8_dense_tflops is not null
             then catalog.fp8_dense_tflops else catalog.bf16_dense_tflops end as dense_tflops,
        -- A request cannot decode faster than one read of all weights per token from the HBM of
        -- every GPU serving it: TPOT >= weight bytes / (GPUs x bandwidth).
        workloads.model_params_b * 1e9 * {{ bytes_per_param('workloads.precision') }}
            / nullif(resolved.resolved_gpu_count * catalog.memory_bandwidth_gbs * 1e9, 0) * 1000 as tpot_floor_ms,
        -- Every processed token (prompt or output) costs at least 2 x params FLOPs.
        resolved.resolved_gpu_count
            * (case when workloads.precision = 'fp8' and catalog.fp8_dense_tflops is not null
                    then catalog.fp8_dense_tflops else catalog.bf16_dense_tflops end) * 1e12
            / nullif(2 * workloads.model_params_b * 1e9, 0) as token_throughput_ceiling
    from resolved
    left join workload_match on resolved.run_id = workload_match.run_id
    left join workloads on workload_match.workload_id = workloads.workload_id
    left join catalog on resolved.resolved_gpu_model = catalog.gpu_model
)

select * from final
