"""LiteLLM proxy spend logs (`LiteLLM_SpendLogs` CSV export), written set-based by DuckDB.

Same workloads, model catalogue and price formula as litellm_logs.py (the committed sample's
generator), but generated in SQL from `range(n)` with hash-derived uniforms, so millions of
requests take seconds and the bytes depend only on the seed:
- code-agent: claude-3-5-sonnet (80 %) / gpt-4o, long prompts with prompt-cache reads, sessions;
- chat-assistant-70b: own hosted vLLM (spend 0) with 30 % fallbacks to together_ai, 5 % cache hits;
- nightly-evals: 01:00-04:00 UTC bursts on gpt-4o-mini / claude-3-5-haiku;
- notebooks-<team> (extra teams): gpt-4o-mini.
6 % of requests fail (40 % of those after the provider billed the prompt); 10 % needed retries.
spend = uncached prompt x input price + cached x cache-read price + completion x output price
(litellm 1.55.0 catalog prices), exact DECIMAL, written the way LiteLLM stores it (a float).
"""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from tools.generate.common import copy_query, sql_str
from tools.generate.fleet import Fleet
from tools.generate.litellm_logs import API_BASES, MODELS


def _models_values() -> str:
    rows = []
    for model, (prov, group, pin, pout, pcache) in MODELS.items():
        rows.append(f"({sql_str(model)}, {sql_str(prov)}, {sql_str(group)}, cast({pin} as decimal(20,12)), "
                    f"cast({pout} as decimal(20,12)), cast({pcache or pin} as decimal(20,12)), {sql_str(API_BASES[prov])})")
    return ",\n".join(rows)


def litellm_sql(rows: int, start: date, days: int, seed: int, owners: dict[str, str], notebooks: list[str],
                first: int = 0) -> str:
    """SQL producing `rows` spend-log rows (ids first..first+rows-1) over `days` days from `start`."""
    nb = ", ".join(sql_str(n) for n in notebooks) or "null"
    nb_n = max(1, len(notebooks))
    nb_share = 0.05 if notebooks else 0.0
    team_case = " ".join(f"when {sql_str(w)} then {sql_str(t)}" for w, t in sorted(owners.items()))

    def u(k: int) -> str:
        return f"((hash(i, {k}, {seed}) % 1000000) / 1000000.0)"

    return f"""
    with prices(model, provider, model_group, p_in, p_out, p_cache, api_base) as (values {_models_values()}),
    base as (
        select i,
            case when {u(1)} < {nb_share} then [{nb}][1 + cast(i % {nb_n} as integer)]
                 when {u(1)} < 0.5 then 'code-agent' when {u(1)} < 0.8 then 'chat-assistant-70b'
                 else 'nightly-evals' end as workload,
            {u(2)} as u2, {u(3)} as u3, {u(4)} as u4, {u(5)} as u5, {u(6)} as u6, {u(7)} as u7, {u(8)} as u8,
            {u(9)} < 0.06 as failed, {u(10)} < 0.4 as billed_failure,
            case when {u(11)} < 0.9 then 0 else [1, 1, 2][1 + cast(floor({u(12)} * 3) as integer)] end as retries,
            {u(13)} as u13, cast(floor({u(14)} * 1000) as integer) as ms, {u(15)} as u15, {u(16)} as u16
        from range({first}, {first + rows}) t(i)
    ),
    shaped as (
        select *,
            case workload
                when 'code-agent' then case when u2 < 0.8 then 'claude-3-5-sonnet-20241022' else 'gpt-4o' end
                when 'chat-assistant-70b' then case when u2 < 0.3 then 'together_ai/meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo'
                                                    else 'hosted_vllm/meta-llama/Llama-3.3-70B-Instruct' end
                when 'nightly-evals' then case when u2 < 0.6 then 'gpt-4o-mini' else 'claude-3-5-haiku-20241022' end
                else 'gpt-4o-mini' end as model,
            case workload when 'code-agent' then 6000 + cast(floor(u3 * 54000) as integer)
                          when 'chat-assistant-70b' then 300 + cast(floor(u3 * 3700) as integer)
                          when 'nightly-evals' then 500 + cast(floor(u3 * 7500) as integer)
                          else 200 + cast(floor(u3 * 2800) as integer) end as prompt0,
            case workload when 'code-agent' then 150 + cast(floor(u6 * 2350) as integer)
                          when 'chat-assistant-70b' then 50 + cast(floor(u6 * 650) as integer)
                          when 'nightly-evals' then 20 + cast(floor(u6 * 380) as integer)
                          else 50 + cast(floor(u6 * 750) as integer) end as completion0,
            workload = 'chat-assistant-70b' and u8 < 0.05 and u2 >= 0.3 as cache_hit,
            case when workload = 'chat-assistant-70b' and u2 < 0.3 then 1 else 0 end as fallbacks,
            timestamp '{start.isoformat()} 00:00:00' + to_days(cast(i % {days} as integer))
              + to_milliseconds(cast(case when workload = 'nightly-evals' then 3600 + floor(u13 * 3 * 3600)
                                          else 7 * 3600 + floor(u13 * 12 * 3600) end as bigint) * 1000 + ms) as start_ts,
            case workload {team_case} end as team
        from base
    ),
    tokens as (
        select s.*, p.provider, p.model_group, p.p_in, p.p_out, p.p_cache, p.api_base,
            case when failed and not billed_failure then 0 else prompt0 end as prompt,
            case when failed and not billed_failure then 0
                 when workload = 'code-agent' and u4 < 0.75 then cast(floor(prompt0 * (0.5 + 0.4 * u5)) as integer)
                 when workload = 'nightly-evals' and u4 < 0.3 then cast(floor(prompt0 * 0.6) as integer)
                 else 0 end as cached,
            case when failed then 0 else completion0 end as completion
        from shaped s join prices p using (model)
    ),
    timed as (
        select *,
            case when cache_hit then 5 else 150 + cast(floor(u15 * 2350) as integer) end as ttft,
            case when cache_hit then 8 + cast(floor(u16 * 32) as integer)
                 else 150 + cast(floor(u15 * 2350) as integer) + completion * (8 + cast(floor(u16 * 22) as integer))
                      + case when failed and prompt > 0 then 30000 else 0 end end as duration,
            case when cache_hit then cast(0 as decimal(38,18))
                 else cast((prompt - cached) * p_in + cached * p_cache + completion * p_out as decimal(38,18)) end as spend_exact
        from tokens
    )
    select
        'chatcmpl-' || substr(md5(i::varchar || '-{seed}'), 1, 8) || '-' || substr(md5(i::varchar || '-{seed}'), 9, 4)
            || '-4' || substr(md5(i::varchar || '-{seed}'), 14, 3) || '-a' || substr(md5(i::varchar || '-{seed}'), 18, 3)
            || '-' || substr(md5(i::varchar || '-{seed}'), 21, 12) as request_id,
        'acompletion' as call_type,
        sha256('sk-litellm-' || team) as api_key,
        cast(cast(spend_exact as double) as varchar) as spend,
        prompt + completion as total_tokens, prompt as prompt_tokens, completion as completion_tokens,
        strftime(start_ts, '%Y-%m-%d %H:%M:%S.%g') as "startTime",
        strftime(start_ts + to_milliseconds(duration), '%Y-%m-%d %H:%M:%S.%g') as "endTime",
        case when completion > 0 then strftime(start_ts + to_milliseconds(ttft), '%Y-%m-%d %H:%M:%S.%g') end
            as "completionStartTime",
        duration as request_duration_ms,
        model, substr(sha256(model), 1, 16) as model_id, model_group, provider as custom_llm_provider, api_base,
        case when workload = 'code-agent' then ['u-amara', 'u-bjorn', 'u-chen', 'u-dara'][1 + cast(i % 4 as integer)]
             else 'svc-' || workload end as "user",
        json_object(
            'user_api_key_alias', team || '-key', 'user_api_key_team_alias', team,
            'attempted_retries', retries, 'max_retries', 3, 'attempted_fallbacks', fallbacks,
            'usage_object', case when provider = 'anthropic' then
                json_object('prompt_tokens', prompt, 'completion_tokens', completion, 'total_tokens', prompt + completion,
                            'cache_read_input_tokens', cached, 'prompt_tokens_details', json_object('cached_tokens', cached))
                else json_object('prompt_tokens', prompt, 'completion_tokens', completion, 'total_tokens', prompt + completion,
                                 'prompt_tokens_details', json_object('cached_tokens', cached)) end,
            'error_information', case when failed then json_object(
                'error_class', case when prompt > 0 then 'Timeout' else 'RateLimitError' end,
                'error_code', case when prompt > 0 then '408' else '429' end) end
        )::varchar as metadata,
        case when cache_hit then 'True' else 'False' end as cache_hit,
        '["workload:' || workload || '","team:' || team || '"]' as request_tags,
        team as team_id, 'org-gpu-ledger' as organization_id,
        case when workload = 'chat-assistant-70b' then 'cust-' || lpad(cast(cast(floor(u7 * 500) as integer) as varchar), 5, '0') end as end_user,
        case when workload = 'code-agent' then 'sess-' || lpad(cast(cast(floor(u7 * 40) as integer) as varchar), 4, '0') end as session_id,
        case when failed then 'failure' else 'success' end as status
    from timed
    order by start_ts, i
    """


def write_litellm(path: Path, rows: int, start: date, days: int, seed: int, owners: dict[str, str],
                  notebooks: list[str] | None = None, first: int = 0) -> int:
    """Write one spend-log CSV with `rows` requests; returns rows written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    copy_query(litellm_sql(rows, start, days, seed, owners, notebooks or [], first), path)
    return rows


def api_rows_per_day(fleet: Fleet) -> int:
    return 250 * len(fleet.teams)


def write_api_spend(fleet: Fleet, out: Path) -> dict[str, int]:
    """api_spend/litellm_spend_logs_<date>.csv per day."""
    counts = {}
    per_day = api_rows_per_day(fleet)
    for d in range(fleet.days):
        day = fleet.start + timedelta(days=d)
        path = out / f"litellm_spend_logs_{day.isoformat()}.csv"
        counts[path.name] = write_litellm(path, per_day, day, 1, fleet.seed, fleet.workload_team,
                                          fleet.notebook_workloads, first=d * per_day)
    return counts
