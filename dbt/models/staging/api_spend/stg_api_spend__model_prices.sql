-- LiteLLM price catalog entries, one row per catalog version and model key (USD per token).
-- The parser reads the version from the file name; the landed copy is named by its hash, so a
-- missing version is taken from the original name (_source_file) the same way (`v1.55.0` -> 1.55.0).
with source as (
    select
        {{ star_except(['catalog_version']) }},
        coalesce(catalog_version,
                 nullif(regexp_extract(_source_file, 'v([0-9]+\.[0-9]+\.[0-9]+)', 1), '')) as catalog_version
    from {{ source('api_spend', 'api_model_prices') }}
),

deduplicated as (
    select *
    from source
    qualify row_number() over (partition by catalog_version, model_key order by _loaded_at desc, _source_line desc) = 1
),

final as (
    select
        catalog_version,
        observed_at,
        model_key,
        lower(provider) as provider,
        mode,
        input_cost_per_token,
        output_cost_per_token,
        cache_read_input_token_cost,
        cache_creation_input_token_cost,
        input_cost_per_token_batches,
        output_cost_per_token_batches,
        max_input_tokens,
        max_output_tokens,
        _file_hash as x_file_hash,
        _source_file as x_source_file
    from deduplicated
)

select * from final
