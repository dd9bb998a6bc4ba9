-- Memory fit per model shape x GPU model x GPU count x precision x context length x concurrency.
-- Inference: weights + KV cache (2 x layers x kv_heads x head_dim x bytes x tokens) against the
-- GPUs' memory under a vLLM-style utilisation cap (0.90). Training adds gradients, Adam optimizer
-- states (fp32 master weights + 2 moments = 12 bytes/param) and activations (a documented 20 %
-- of weights). Fit is not yes/no: margin % and three states. Measured peak memory, fragmentation
-- and OOM counts of real tests are published beside it in fct_memory_fit_tests.
{% set serving_cap = 0.90 %}
with workloads as (
    select * from {{ ref('stg_registry__workloads') }}
    where model_params_b is not null
),

gpus as (
    select gpu_model, memory_gb from {{ ref('dim_gpu') }}
    where gpu_class in ('frontier', 'datacenter', 'inference', 'workstation', 'consumer')
),

shapes as (
    select
        workload_id,
        model_name,
        workload_type,
        model_params_b,
        model_layers,
        model_kv_heads,
        model_head_dim,
        lower(coalesce(precision, 'bf16')) as precision,
        case
            when lower(coalesce(quantisation, '')) like '%4%' then 0.5
            when lower(coalesce(precision, 'bf16')) in ('fp8', 'int8') then 1.0
            when lower(coalesce(precision, 'bf16')) in ('fp32') then 4.0
            else 2.0
        end as bytes_per_param,
        coalesce(context_window, 4096) as context_length,
        workload_type in ('pre-training', 'full fine-tune', 'lora fine-tune') as is_training,
        workload_type = 'lora fine-tune' as is_lora
    from workloads
),

loads as (
    select shapes.*, concurrency.n as concurrency
    from shapes
    inner join workloads using (workload_id),
    {{ lateral_explode(list_distinct(list_of(['1', 'coalesce(cast(workloads.concurrency as integer), 1)']))) }} as concurrency(n)
),

estimates as (
    select
        loads.*,
        counts.gpu_count,
        gpus.gpu_model,
        gpus.memory_gb,
        model_params_b * bytes_per_param as weights_gb,
        -- KV cache is kept at 16-bit: 2 (K and V) x layers x kv_heads x head_dim x 2 bytes per token.
        case when model_layers is not null and model_kv_heads is not null and model_head_dim is not null
             then 2 * model_layers * model_kv_heads * model_head_dim * 2 end as kv_bytes_per_token,
        case when is_training and not is_lora then model_params_b * (bytes_per_param + 12) + model_params_b * bytes_per_param * 0.2
             when is_lora then model_params_b * bytes_per_param * 0.2 + model_params_b * 0.02 * 16
             else 0 end as training_extra_gb,
        counts.gpu_count * gpus.memory_gb * {{ serving_cap }} as available_gb
    from loads
    cross join gpus
    cross join (values (1), (2), (4), (8)) as counts(gpu_count)
),

final as (
    select
        workload_id, model_name, workload_type, gpu_model, gpu_count, precision, context_length, concurrency,
        round(weights_gb, 2) as weights_gb,
        kv_bytes_per_token,
        round(coalesce(kv_bytes_per_token, 0) * context_length * concurrency / 1e9, 2) as kv_cache_gb,
        round(training_extra_gb, 2) as training_extra_gb,
        round(weights_gb + coalesce(kv_bytes_per_token, 0) * context_length * concurrency / 1e9 + training_extra_gb, 2)
            as required_gb,
        round(available_gb, 2) as available_gb,
        round(100 * (available_gb - (weights_gb + coalesce(kv_bytes_per_token, 0) * context_length * concurrency / 1e9
                                     + training_extra_gb)) / available_gb, 1) as margin_pct
    from estimates
)

select
    *,
    case when margin_pct >= 15 then 'fits with margin' when margin_pct >= 0 then 'fits' else 'does not fit' end
        as fit_status
from final
