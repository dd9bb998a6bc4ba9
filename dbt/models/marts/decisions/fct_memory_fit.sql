-- Memory fit per workload x GPU model x GPU count x concurrency (at the workload's precision and
-- context), with the serving runtime included (docs/cost_model.md, "Memory fit"):
--   required = weights + KV cache + activations/workspace + per-GPU runtime reserve (+ training state)
--   weights     = params x bytes per parameter (0.5 for 4-bit, 1 for fp8/int8, 4 for fp32, else 2)
--   KV cache    = 2 (K, V) x layers x kv_heads x head_dim x 2 bytes x tokens per session x concurrency, split
--                 over the tensor-parallel ranks; replicated when the GPUs outnumber the KV heads
--   tokens per session = the request shape (p95 input, else mean input, + mean output tokens) capped
--                 at the context window; the full context window only when no request shape is recorded
--                 (a paged KV cache holds the tokens a session has, not its window: 64 sessions at full
--                 8k context put today's own 16 x A100-40GB under water)
--   activations = policy activation_workspace_gb_per_gpu x GPUs (the engine's profiled peak)
--   reserve     = GPUs x memory x (1 - gpu_memory_utilization): what the engine leaves to the
--                 CUDA context, NCCL buffers and the allocator (vLLM --gpu-memory-utilization)
--   margin %    = 100 x (GPUs x memory - required) / (GPUs x memory)
-- fit_status: 'fits' only at margin >= policy memory_margin_min_pct (default 15); 'tight' between 0
-- and the threshold (not eligible); 'does not fit' below 0. GPU counts: 1, 2, 4, 8 and every count
-- a rentable instance offers (and two instances where the network allows multi-node).
with workloads as (
    select * from {{ ref('stg_registry__workloads') }}
    where model_params_b is not null
),

policies as (
    select * from {{ ref('int_decision_policies') }}
),

gpus as (
    select gpu_model, memory_gb from {{ ref('dim_gpu') }}
    where memory_gb > 0
),

counts as (
    select gpu_model, gpu_count from gpus cross join (values (1), (2), (4), (8)) as base(gpu_count)
    union
    select gpu_model, gpus_per_instance from {{ ref('int_decision_instance_offers') }}
    union
    select gpu_model, 2 * gpus_per_instance from {{ ref('int_decision_instance_offers') }} where multi_node_allowed
),

shapes as (
    select
        workload_id, model_name, workload_type, model_params_b, model_layers, model_kv_heads, model_head_dim,
        lower(coalesce(precision, 'bf16')) as precision,
        case
            when lower(coalesce(quantisation, '')) like '%4%' then 0.5
            when lower(coalesce(precision, 'bf16')) in ('fp8', 'int8') then 1.0
            when lower(coalesce(precision, 'bf16')) in ('fp32') then 4.0
            else 2.0
        end as bytes_per_param,
        coalesce(context_window, 4096) as context_length,
        case when coalesce(p95_input_tokens, mean_input_tokens) is not null or mean_output_tokens is not null
                 then least(coalesce(context_window, 4096),
                            coalesce(p95_input_tokens, mean_input_tokens, 0) + coalesce(mean_output_tokens, 0))
             else coalesce(context_window, 4096) end as kv_tokens_per_session,
        workload_type in ('pre-training', 'full fine-tune', 'lora fine-tune') as is_training,
        workload_type = 'lora fine-tune' as is_lora,
        cast(coalesce(concurrency, 1) as integer) as production_concurrency
    from workloads
),

loads as (
    select shapes.*, 1 as concurrency from shapes
    union
    select shapes.*, production_concurrency from shapes
),

estimates as (
    select
        loads.*,
        gpus.gpu_model,
        counts.gpu_count,
        gpus.memory_gb as gpu_memory_gb,
        model_params_b * bytes_per_param as weights_gb,
        case when model_layers is not null and model_kv_heads is not null and model_head_dim is not null
             then 2 * model_layers * model_kv_heads * model_head_dim * 2 end as kv_bytes_per_token,
        case when not is_training and model_kv_heads is not null and model_layers is not null and model_head_dim is not null
             then 2.0 * model_layers * model_kv_heads * model_head_dim * 2 * kv_tokens_per_session * concurrency / 1e9
                  * greatest(1.0, cast(counts.gpu_count as double) / model_kv_heads)
             else 0 end as kv_cache_gb,
        counts.gpu_count * policies.activation_workspace_gb_per_gpu as activation_workspace_gb,
        counts.gpu_count * gpus.memory_gb * (1 - policies.gpu_memory_utilization) as runtime_reserve_gb,
        case when is_training and not is_lora then model_params_b * (bytes_per_param + 12) + model_params_b * bytes_per_param * 0.2
             when is_lora then model_params_b * bytes_per_param * 0.2 + model_params_b * 0.02 * 16
             else 0 end as training_extra_gb,
        counts.gpu_count * gpus.memory_gb as available_gb,
        policies.memory_margin_min_pct
    from loads
    cross join gpus
    inner join counts on counts.gpu_model = gpus.gpu_model
    cross join policies
),

computed as (
    select
        estimates.*,
        weights_gb + kv_cache_gb + activation_workspace_gb + runtime_reserve_gb + training_extra_gb as required_gb
    from estimates
),

final as (
    select
        workload_id, model_name, workload_type, gpu_model, gpu_count, precision, context_length, kv_tokens_per_session, concurrency,
        concurrency = production_concurrency as is_production_concurrency,
        gpu_memory_gb,
        round(weights_gb, 2) as weights_gb,
        kv_bytes_per_token,
        round(kv_cache_gb, 2) as kv_cache_gb,
        round(kv_cache_gb / gpu_count, 2) as kv_cache_gb_per_gpu,
        round(activation_workspace_gb, 2) as activation_workspace_gb,
        round(runtime_reserve_gb, 2) as runtime_reserve_gb,
        round(training_extra_gb, 2) as training_extra_gb,
        round(required_gb, 2) as required_gb,
        round(available_gb, 2) as available_gb,
        round(100 * (available_gb - required_gb) / available_gb, 1) as margin_pct,
        memory_margin_min_pct,
        case when 100 * (available_gb - required_gb) / available_gb >= memory_margin_min_pct then 'fits'
             when required_gb <= available_gb then 'tight'
             else 'does not fit' end as fit_status,
        case when 100 * (available_gb - required_gb) / available_gb >= memory_margin_min_pct
                 then 'margin at or above the ' || cast(memory_margin_min_pct as string) || ' % threshold'
             when required_gb <= available_gb
                 then 'loads, but the margin is under the ' || cast(memory_margin_min_pct as string)
                      || ' % threshold (bursts, fragmentation): not eligible'
             else 'needs ' || cast(round(required_gb - available_gb, 1) as string) || ' GB more than the GPUs have'
        end as fit_note
    from computed
)

select * from final
