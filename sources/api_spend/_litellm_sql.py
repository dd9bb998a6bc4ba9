"""The one-pass DuckDB query that types and checks LiteLLM spend-log rows (see litellm_spend_logs.py).

Split out of the parser so each file stays readable: SQL expression builders for timestamps,
integers and text cleaning, the `_ONE_PASS` query and the reject messages it can produce.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc


def _json_key(key: str) -> str:
    return '"' + key.replace('"', '\\"') + '"'


def _ts(x: str) -> str:
    """Naive UTC TIMESTAMP from text; NULL when unreadable.

    Values with no UTC offset after the date (LiteLLM writes `2025-04-14 10:00:00.123`) take
    the plain TIMESTAMP cast; the TIMESTAMPTZ cast (ICU, several times slower) runs only for
    values with an offset (which the TIMESTAMP cast would silently drop) or that the plain
    cast cannot read (e.g. padded with spaces). COALESCE is lazy.
    """
    offset = f"(strpos(substr({x}, 11), '+') > 0 or strpos(substr({x}, 11), '-') > 0)"
    return (
        f"coalesce(case when not {offset} then try_cast({x} as timestamp) end, "
        f"cast(timezone('UTC', try_cast(nullif(trim({x}), '') as timestamptz)) as timestamp))"
    )


def _int(x: str, via_double: bool = False) -> str:
    """BIGINT from text; the trimming cast runs only when the plain one fails (lazy COALESCE)."""
    if via_double:
        return f"try_cast(try_cast(nullif(trim({x}), '') as double) as bigint)"
    return f"coalesce(try_cast({x} as bigint), try_cast(nullif(trim({x}), '') as bigint))"


def _blank(x: str) -> str:
    return f"(nullif(trim({x}), '') is null)"


# DuckDB's trim() strips the Unicode space separators (category Zs: these 17), not tabs/newlines.
_ZS = "".join(map(chr, (0x20, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x202F, 0x205F, 0x3000)))
# Text columns passed through as `nullif(trim(x), '')`: cleaned in pyarrow after the query
# (see _arrow_clean), not per value in SQL, where trim() copies every value.
_PASS_TEXT = ("provider", "model", "model_group", "team_id", "user_id", "end_user", "session_id", "call_type")


def _clean(x: str) -> str:
    """`nullif(trim(x), '')` in SQL, trimming only values that can change: ones starting or
    ending with a space, or holding non-ASCII (a multi-byte Zs character), by byte vs
    character length. Same result as nullif(trim(x), '') for every input."""
    return (f"case when {x} = '' then null when starts_with({x}, ' ') or ends_with({x}, ' ') "
            f"or strlen({x}) <> length({x}) then nullif(trim({x}), '') else {x} end")


def _arrow_clean(col: pa.ChunkedArray) -> pa.ChunkedArray:
    """DuckDB's `nullif(trim(x), '')` over a column, vectorised; returns the column untouched
    (no copy) when every value is ASCII, non-empty and has no space at either end."""
    plain = pc.and_(pc.string_is_ascii(col), pc.invert(pc.or_(
        pc.or_(pc.starts_with(col, " "), pc.ends_with(col, " ")), pc.equal(col, ""))))
    if pc.all(plain, skip_nulls=True).as_py() is not False:
        return col
    trimmed = pc.utf8_trim(col, characters=_ZS)
    return pc.if_else(pc.equal(trimmed, ""), pa.scalar(None, pa.string()), trimmed)


# ONE query from the source rows to the output: typed values, the first rule a row breaks
# (`_rule`, NULL = good; duplicates are found afterwards in pyarrow), reject detail computed
# only for rows with a rule (CASE is lazy), warning flags. Good rows are the common case and
# pay only for the typing and JSON extraction.
_ONE_PASS = """
with s as (
  select *,
    {rid} as rid,
    {api_key} as key_c,
    -- DECIMAL(38,12) from text is DuckDB's slow 128-bit path: DECIMAL(18,12) first (same scale,
    -- same rounding); the wide cast only for values of 1e6 or more, padded or bad text.
    coalesce(try_cast(spend as decimal(18, 12))::decimal(38, 12),
             try_cast(nullif(trim(spend), '') as decimal(38, 12))) as spend_d,
    {start_ts} as start_ts,
    {end_ts} as end_ts,
    {prompt_i} as prompt_i,
    {completion_i} as completion_i,
    {total_i} as total_i,
    {duration_i} as duration_i,
    case status when 'success' then 'success' when 'failure' then 'failure'
      else lower(nullif(trim(status), '')) end as status_l,
    -- try(): NULL for invalid JSON, so the text is parsed once (no json_valid pass). JSON
    -- pointers, not `$.` paths: same keys, measurably cheaper per row for a list of paths.
    try(json_extract_string(metadata, ['/attempted_retries', '/attempted_fallbacks', '/fallback',
      '/usage_object/prompt_tokens_details/cached_tokens', '/usage_object/cache_read_input_tokens',
      '/workload_id', '/spend_logs_metadata/workload_id'])) as m,
    try(json_extract_string(request_tags, '$[*]')) as tag_list
  from {source}
), r as (
  select *,
    case
      -- A complete, plausible row (nearly all) is decided by one AND chain; the rest walk
      -- the rules in order.
      when rid is not null and end_ts >= start_ts and spend_d >= 0 and prompt_i >= 0 and completion_i >= 0
           and total_i >= 0 and status_l in ('success', 'failure') then null
      when rid is null then 'missing_field'
      when start_ts is null then 'invalid_timestamp'
      when end_ts is null and not {end_blank} then 'invalid_timestamp'
      when end_ts < start_ts then 'period_reversed'
      when spend_d is null then 'non_numeric'
      when spend_d < 0 then 'negative_spend'
      when prompt_i is null and not {prompt_blank} then 'non_numeric'
      when completion_i is null and not {completion_blank} then 'non_numeric'
      when total_i is null and not {total_blank} then 'non_numeric'
      when prompt_i < 0 or completion_i < 0 or total_i < 0 then 'negative_quantity'
      when status_l is not null and status_l not in ('success', 'failure') then 'invalid_status'
    end as _rule
  from s
)
select
  rid as request_id,
  start_ts as started_at,
  end_ts as ended_at,
  -- provider, model, ..., call_type: raw here, nullif(trim()) applied by _arrow_clean.
  custom_llm_provider as provider,
  model as model,
  model_group as model_group,
  -- LiteLLM stores the hashed virtual key; a raw `sk-` key in an export is hashed, never kept.
  -- Trimmed first: ' sk-...' (padded in the export) is still a raw key and must not be stored.
  case when starts_with(key_c, 'sk-') then sha256(key_c) else key_c end as api_key_hash,
  team_id as team_id,
  "user" as user_id,
  end_user as end_user,
  session_id as session_id,
  coalesce(nullif(substr(list_filter(coalesce(tag_list, try(json_extract_string(metadata, '$.tags[*]'))),
                                     x -> starts_with(x, 'workload:'))[1], 10), ''), m[6], m[7]) as workload_id,
  call_type as call_type,
  status_l as status,
  prompt_i as prompt_tokens,
  completion_i as completion_tokens,
  try_cast(coalesce(m[4], m[5]) as bigint) as cached_tokens,
  coalesce(total_i, prompt_i + completion_i) as total_tokens,
  cast(spend_d as varchar) as spend,
  'USD' as currency,
  try_cast(m[1] as integer) as retries,
  coalesce(try_cast(m[2] as integer) > 0, try_cast(m[3] as boolean), false) as fallback,
  case cache_hit when 'False' then false when 'True' then true
    else try_cast(nullif(lower(trim(cache_hit)), 'none') as boolean) end as cache_hit,
  duration_i as request_duration_ms,
  {line_col} as _source_line,
  _rule,
  case when _rule is not null then case _rule
    when 'missing_field' then 'request_id'
    when 'invalid_timestamp' then case when start_ts is null then 'startTime' else 'endTime' end
    when 'period_reversed' then 'endTime'
    when 'non_numeric' then case when spend_d is null then 'spend' when prompt_i is null then 'prompt_tokens'
                                 when completion_i is null then 'completion_tokens' else 'total_tokens' end
    when 'negative_spend' then 'spend'
    when 'negative_quantity' then 'tokens'
    when 'invalid_status' then 'status'
  end end as _rej_col,
  case when _rule is not null then case _rule
    when 'missing_field' then request_id
    when 'invalid_timestamp' then case when start_ts is null then "startTime" else "endTime" end
    when 'period_reversed' then "endTime"
    when 'non_numeric' then case when spend_d is null then spend when prompt_i is null then prompt_tokens
                                 when completion_i is null then completion_tokens else total_tokens end
    when 'negative_spend' then spend
    when 'negative_quantity' then concat_ws('/', prompt_tokens, completion_tokens, total_tokens)
    when 'invalid_status' then status
  end end as _rej_val,
  case when request_id is distinct from rid then request_id end as _rid_raw,
  (case when m is null and not {meta_blank} and not coalesce(json_valid(metadata), false) then 1 else 0 end
   + case when tag_list is null and not {tags_blank} and not coalesce(json_valid(request_tags), false) then 2 else 0 end
   + case when starts_with(key_c, 'sk-') then 4 else 0 end)::utinyint as _flags
from r
"""

_MESSAGES = {
    "missing_field": "request_id is empty",
    "invalid_timestamp": "startTime/endTime is missing or not a timestamp",
    "period_reversed": "endTime is before startTime",
    "non_numeric": "spend or a token count is not a number",
    "negative_spend": "spend is negative",
    "negative_quantity": "a token count is negative",
    "invalid_status": "status is neither success nor failure",
    "duplicate_request_id": "request_id already seen earlier in the file",
}
_AUX = ["_rule", "_rej_col", "_rej_val", "_rid_raw", "_flags"]


def _one_pass_sql(source: str, line_col: str) -> str:
    return _ONE_PASS.format(
        source=source, line_col=line_col,
        start_ts=_ts('"startTime"'), end_ts=_ts('"endTime"'),
        prompt_i=_int("prompt_tokens"), completion_i=_int("completion_tokens"), total_i=_int("total_tokens"),
        duration_i=_int("request_duration_ms", via_double=True),
        end_blank=_blank('"endTime"'), prompt_blank=_blank("prompt_tokens"),
        completion_blank=_blank("completion_tokens"), total_blank=_blank("total_tokens"),
        meta_blank=_blank("metadata"), tags_blank=_blank("request_tags"),
        rid=_clean("request_id"), api_key=_clean("api_key"),
    )
