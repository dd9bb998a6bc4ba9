-- Manual commercial quotes with the procurement checklist, one row per quote, priced per GPU-hour
-- like the list prices (gpu-hour: as quoted; hour: the quoted capacity's hourly price / gpu_count;
-- other units: null) so a quote can be set beside fct_gpu_offers_current.
with quotes as (
    select * from {{ ref('stg_prices__quotes') }}
),

catalog as (
    select gpu_model from {{ ref('gpu_catalog') }}
),

final as (
    select
        quotes.quote_id,
        quotes.provider,
        quotes.sku,
        quotes.gpu_model,
        catalog.gpu_model is not null as is_known_gpu_model,
        quotes.gpu_count,
        quotes.region,
        quotes.pricing_category,
        quotes.currency,
        quotes.price,
        quotes.price_unit,
        case
            when quotes.price_unit = 'gpu-hour' then quotes.price
            when quotes.price_unit = 'hour' then {{ safe_unit_cost('quotes.price', 'quotes.gpu_count') }}
        end as price_per_gpu_hour,
        quotes.term_months,
        quotes.minimum_commitment,
        quotes.cancellation_terms,
        quotes.support_tier,
        quotes.quoted_at,
        quotes.quoted_by,
        quotes.interconnect,
        quotes.gpus_per_node,
        quotes.node_form_factor,
        quotes.storage_network,
        quotes.driver_cuda,
        quotes.orchestration,
        quotes.serving_frameworks,
        quotes.idle_billed,
        quotes.auto_shutdown,
        quotes.usage_export_format,
        quotes.egress_fees,
        quotes.network_boundary,
        quotes.data_residency,
        quotes.compliance,
        -- how much of the procurement checklist the quote answers (of 16 questions)
        (case when quotes.cancellation_terms is not null then 1 else 0 end)
        + (case when quotes.support_tier is not null then 1 else 0 end)
        + (case when quotes.interconnect is not null then 1 else 0 end)
        + (case when quotes.gpus_per_node is not null then 1 else 0 end)
        + (case when quotes.node_form_factor is not null then 1 else 0 end)
        + (case when quotes.storage_network is not null then 1 else 0 end)
        + (case when quotes.driver_cuda is not null then 1 else 0 end)
        + (case when quotes.orchestration is not null then 1 else 0 end)
        + (case when quotes.serving_frameworks is not null then 1 else 0 end)
        + (case when quotes.idle_billed is not null then 1 else 0 end)
        + (case when quotes.auto_shutdown is not null then 1 else 0 end)
        + (case when quotes.usage_export_format is not null then 1 else 0 end)
        + (case when quotes.egress_fees is not null then 1 else 0 end)
        + (case when quotes.network_boundary is not null then 1 else 0 end)
        + (case when quotes.data_residency is not null then 1 else 0 end)
        + (case when quotes.compliance is not null then 1 else 0 end) as checklist_answers,
        quotes.file_hash,
        quotes.source_file
    from quotes
    left join catalog on quotes.gpu_model = catalog.gpu_model
)

select * from final
