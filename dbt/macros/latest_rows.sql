{#- Raw rows restated by a later load: the latest load of a key wins (its latest line within the file).

   The staging views stg_usage__gpu_jobs and stg_api_spend__requests are these macros with every key; an
   incremental model that rebuilds some days reads the same macro with `keys_where`, a predicate on the
   raw rows: only the keys having a raw row it selects are windowed. A nightly run then reads the rows of
   the night's keys, not every key ever loaded (at 365 days, 216k raw job rows and 364k request rows, a
   night's rows cost 0.35 and 0.45 CPU s through the view's window, 0.05 and 0.04 keyed). The latest row
   of a key is the same whether or not other keys are read, so a caller that keeps the latest rows on its
   rebuilt days gets exactly the view's rows of those days when `keys_where` selects every raw row of
   those days: a key whose latest row is on such a day has that raw row. A restated row on another day
   still wins over the older one. Rows without a key are one partition in the view (its latest row stays,
   for the models' not_null checks to find); `in` never matches a null, so they are read whatever
   `keys_where` selects. -#}
{% macro latest_per_key(relation, key, keys_where=none) -%}
    select * from {{ relation }}
    {%- if keys_where is not none %}
    where {{ key }} is null or {{ key }} in (select {{ key }} from {{ relation }} where {{ keys_where }})
    {%- endif %}
    qualify row_number() over (partition by {{ key }} order by _loaded_at desc, _source_line desc) = 1
{%- endmacro %}

{#- Scheduler jobs (Slurm) and Kubernetes allocations (OpenCost). A job exported again in a later
    accounting file (its final state) replaces the earlier row; OpenCost allocations are keyed by their
    window start as the same aggregate name recurs every window. -#}
{% macro staged_gpu_jobs(keys_where=none) -%}
    {%- set keyed -%}
        (select
            scheduler || ':' || coalesce(cluster, '(default)') || ':' || job_id
                || case when scheduler = 'kubernetes' then '@' || coalesce({{ gpu_ledger.ts_text('started_at') }}, '') else '' end
                as job_key,
            *
        from {{ source('usage', 'gpu_jobs') }}
        where job_id is not null) as keyed
    {%- endset -%}
    with latest as (
        {{ gpu_ledger.latest_per_key(keyed, 'job_key', keys_where) }}
    )

    select
        job_key,
        scheduler,
        coalesce(cluster, '(default)') as cluster,
        job_id,
        array_job_id,
        job_name,
        user_name,
        nullif(trim(account), '') as account,
        nullif(trim(partition), '') as partition,
        nullif(trim(namespace), '') as namespace,
        pod,
        labels,
        nullif(trim(comment), '') as comment,
        upper(state) as state,
        state_raw,
        submitted_at,
        started_at,
        ended_at,
        elapsed_s,
        gpu_count,
        lower(nullif(trim(gpu_type), '')) as gpu_type,
        lower(nullif(trim(mig_profile), '')) as mig_profile,
        gpu_share,
        gpu_memory_share,
        gpu_hours,
        gpu_util_pct,
        gpu_mem_max_mib,
        n_cpus,
        nullif(trim(node_list), '') as node_list,
        n_nodes,
        exit_code,
        source_format,
        _file_hash as x_file_hash,
        _source_file as x_source_file,
        _source_line as x_source_line
    from latest
{%- endmacro %}

{#- LiteLLM proxy request log, one row per request_id (a log exported twice keeps its latest load).
    Failed requests are kept: what the provider billed for them is retry waste. -#}
{% macro staged_api_requests(keys_where=none) -%}
    with deduplicated as (
        {{ gpu_ledger.latest_per_key(source('api_spend', 'api_requests'), 'request_id', keys_where) }}
    )

    select
        request_id,
        started_at,
        ended_at,
        lower(provider) as provider,
        model,
        model_group,
        api_key_hash,
        team_id as team_tag,
        user_id,
        end_user,
        session_id,
        workload_id as workload_tag,
        call_type,
        lower(status) as status,
        coalesce(prompt_tokens, 0) as prompt_tokens,
        coalesce(completion_tokens, 0) as completion_tokens,
        coalesce(cached_tokens, 0) as cached_tokens,
        total_tokens,
        {{ gpu_ledger.money('coalesce(spend, 0)') }} as spend,
        upper(coalesce(currency, 'USD')) as currency,
        coalesce(retries, 0) as retries,
        coalesce(fallback, false) as fallback,
        coalesce(cache_hit, false) as cache_hit,
        request_duration_ms,
        _file_hash as x_file_hash,
        _source_file as x_source_file,
        _source_line as x_source_line
    from deduplicated
{%- endmacro %}

{#- The rows an incremental model reads from one of the views above: every row when `plan` rebuilds every
    day (the view itself, `view`), else the latest rows on the plan's days. The keys windowed are those
    with a raw row on a rebuilt day: a key whose latest row is on such a day has that raw row, so it is
    read, and the outer filter keeps the latest rows on those days only (a key restated onto another day
    keeps its later row there) - the view's rows of those days. `day_expr` reads columns the view passes
    through unchanged from the raw rows (started_at, submitted_at), so it is the same day on both. -#}
{% macro staged_rows_of_plan(view, staged_macro, day_expr, plan) -%}
    {%- if plan['all'] -%}
        select * from {{ view }}
    {%- else -%}
        select * from ({{ staged_macro(keys_where=gpu_ledger.in_plan(day_expr, plan)) }}) as staged
        where {{ gpu_ledger.in_plan(day_expr, plan) }}
    {%- endif -%}
{%- endmacro %}

{#- The latest rows of keys in files loaded since the model's watermark whose latest row is from such a
    file (new, late or restated rows): what a night's changed days start from. -#}
{% macro staged_rows_of_new_files(staged_macro) -%}
    select staged.* from ({{ staged_macro(keys_where='_file_hash in (select file_hash from ('
                                          ~ gpu_ledger.files_loaded_since_last_build() ~ ') as new_files)') }}) as staged
    inner join ({{ gpu_ledger.files_loaded_since_last_build() }}) as new_files on new_files.file_hash = staged.x_file_hash
{%- endmacro %}
