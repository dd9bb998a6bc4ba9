"""LiteLLM proxy spend logs (`LiteLLM_SpendLogs` table export), CSV or JSONL.

The export format is ours (no public row sample exists): one request per row/line with the
LiteLLM_SpendLogs column names of litellm 1.110.2's schema.prisma (request_id, call_type,
api_key, spend, total_tokens, prompt_tokens, completion_tokens, startTime, endTime,
completionStartTime, request_duration_ms, model, model_id, model_group, custom_llm_provider,
api_base, user, metadata, cache_hit, request_tags, team_id, organization_id, end_user,
session_id, status). `metadata` and `request_tags` hold JSON text (CSV) or JSON values (JSONL).
Extra columns (messages, response, cache_key, ...) are ignored; header names match
case-insensitively and with or without underscores (startTime == start_time).

Files can hold 10M+ requests, so everything runs in DuckDB: the file is staged as VARCHAR
(CSV via read_csv with explicit options and `store_rejects` so malformed lines are reported,
JSONL as one VARCHAR per line parsed with DuckDB's JSON functions), then typed and checked
in one SQL pass. One record per physical line is assumed (compact JSON in metadata), which is
how `_source_line` (header = line 1) is derived.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import duckdb

from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile, head_text

# LiteLLM_SpendLogs columns we read (canonical spelling), all staged as VARCHAR.
COLUMNS = (
    "request_id", "call_type", "api_key", "spend", "total_tokens", "prompt_tokens",
    "completion_tokens", "startTime", "endTime", "completionStartTime", "request_duration_ms",
    "model", "model_id", "model_group", "custom_llm_provider", "api_base", "user", "metadata",
    "cache_hit", "request_tags", "team_id", "organization_id", "end_user", "session_id", "status",
)
REQUIRED = ("request_id", "startTime", "spend")
STATUSES = ("success", "failure")


def _norm(name: str) -> str:
    return name.strip().strip('"').lower().replace("_", "")


CANONICAL = {_norm(c): c for c in COLUMNS}


def _first_line(head: bytes) -> str:
    return head_text(head).split("\n", 1)[0].strip()


def detect_csv(path: Path, head: bytes) -> bool:
    """A CSV whose header has LiteLLM_SpendLogs names: request_id, startTime, spend, call_type."""
    first = _first_line(head)
    if first.startswith("{") or "," not in first:
        return False
    names = {_norm(c) for c in first.split(",")}
    return {"requestid", "starttime", "spend", "calltype"} <= names


def detect_jsonl(path: Path, head: bytes) -> bool:
    """JSON Lines whose first record has request_id, startTime, spend and call_type keys."""
    first = _first_line(head)
    return (
        first.startswith("{")
        and first.endswith("}")
        and all(f'"{k}"' in first for k in ("request_id", "spend", "call_type"))
        and ('"startTime"' in first or '"start_time"' in first)
    )


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _connect() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")  # naive timestamps in the export are UTC
    con.execute("set enable_progress_bar = false")
    con.execute("set preserve_insertion_order = true")  # rowid == record order, for _source_line
    con.execute(f"set temp_directory = {_sql_str(tempfile.gettempdir() + '/gpu_ledger_duckdb')}")
    return con


def _stage_csv(con: duckdb.DuckDBPyConnection, path: Path) -> list[Reject]:
    """Stage the CSV as VARCHAR columns (canonical names) in `staged`; return reader rejects."""
    with open(path, "rb") as fh:
        header = fh.readline().decode("utf-8-sig", errors="replace").rstrip("\r\n")
    if not header:
        raise UnreadableFile(path, 1, "empty file (no header)")
    names = [h.strip().strip('"') for h in header.split(",")]
    columns = {f"c{i}": "VARCHAR" for i in range(len(names))}  # positional; renamed below
    con.execute(
        f"""create temp table staged_raw as select * from read_csv(
            {_sql_str(str(path))}, header = true, auto_detect = false, delim = ',', quote = '"',
            escape = '"', columns = {columns!r}, store_rejects = true, null_padding = false,
            strict_mode = true, encoding = 'utf-8')"""
    )
    _rename(con, names, path)
    # DuckDB can report several errors for one line (one per surplus column): one reject per line.
    return [
        Reject(int(line), "malformed_line", f"{etype.lower()}: {msg}", col, (csv_line or "")[:200])
        for line, etype, msg, col, csv_line in con.execute(
            """select line, arg_min(error_type::varchar, byte_position), arg_min(error_message, byte_position),
                      arg_min(column_name, byte_position), arg_min(csv_line, byte_position)
               from reject_errors group by line order by line"""
        ).fetchall()
    ]


def _rename(con: duckdb.DuckDBPyConnection, names: list[str], path: Path) -> None:
    """Select the known LiteLLM columns out of `staged_raw` under their canonical names."""
    picked: dict[str, str] = {}
    for i, name in enumerate(names):
        canon = CANONICAL.get(_norm(name))
        if canon and canon not in picked:
            picked[canon] = f"c{i}"
    missing = [c for c in REQUIRED if c not in picked]
    if missing:
        raise UnreadableFile(path, 1, f"not a LiteLLM spend-log export: missing columns {missing}")
    select = ", ".join(
        f"{_quote(picked[c])} as {_quote(c)}" if c in picked else f"cast(null as varchar) as {_quote(c)}"
        for c in COLUMNS
    )
    # rowid of staged_raw is the record ordinal (insertion order preserved).
    con.execute(f"create temp table staged as select rowid + 1 as _ord, {select} from staged_raw")
    con.execute("drop table staged_raw")


def _stage_jsonl(con: duckdb.DuckDBPyConnection, path: Path) -> list[Reject]:
    """Stage JSON Lines: each line read as one VARCHAR, fields pulled with DuckDB JSON functions."""
    # A delimiter/quote that never occurs makes read_csv hand back whole lines.
    con.execute(
        f"""create temp table lines_raw as select line from read_csv(
            {_sql_str(str(path))}, header = false, auto_detect = false, delim = '\\x1f', quote = '',
            escape = '', columns = {{'line': 'VARCHAR'}}, strict_mode = false, encoding = 'utf-8')"""
    )
    con.execute("create temp table lines as select rowid + 1 as _ord, line from lines_raw")
    con.execute("drop table lines_raw")
    if con.execute("select count(*) from lines where line is not null").fetchone()[0] == 0:
        raise UnreadableFile(path, 1, "empty file")
    bad = con.execute(
        "select _ord, left(line, 200) from lines where line is not null and trim(line) <> '' "
        "and not coalesce(json_valid(line), false) order by _ord"
    ).fetchall()
    # The first line is what `detect` looked at; if even that is broken the file is unusable.
    keys = con.execute(
        "select json_keys(line) from lines where coalesce(json_valid(line), false) order by _ord limit 1"
    ).fetchone()
    if keys is None:
        raise UnreadableFile(path, 1, "no valid JSON record")
    present = {_norm(k): k for k in keys[0]}
    missing = [c for c in REQUIRED if _norm(c) not in present]
    if missing:
        raise UnreadableFile(path, 1, f"not a LiteLLM spend-log export: missing keys {missing}")
    paths = [f"$.{_json_key(present.get(_norm(c), c))}" for c in COLUMNS]
    select = ", ".join(f"v[{i + 1}] as {_quote(c)}" for i, c in enumerate(COLUMNS))
    # json_extract_string returns objects/arrays (metadata, request_tags) as JSON text.
    con.execute(
        f"""create temp table staged as select _ord, {select} from (
              select _ord, json_extract_string(line, {paths!r}) as v from lines
              where coalesce(json_valid(line), false))"""
    )
    con.execute("drop table lines")
    return [Reject(int(o), "invalid_json", "line is not a valid JSON object", None, text) for o, text in bad]


def _json_key(key: str) -> str:
    return '"' + key.replace('"', '\\"') + '"'


# One SQL pass: typed columns plus the first rule each row breaks (NULL = row is good).
_TYPED = """
create temp table typed as
with s as (
  select *,
    {line_expr} as _source_line,
    nullif(trim(request_id), '') as rid,
    try_cast(nullif(trim(spend), '') as decimal(38, 12)) as spend_d,
    cast(timezone('UTC', try_cast(nullif(trim("startTime"), '') as timestamptz)) as timestamp) as start_ts,
    cast(timezone('UTC', try_cast(nullif(trim("endTime"), '') as timestamptz)) as timestamp) as end_ts,
    try_cast(nullif(trim(prompt_tokens), '') as bigint) as prompt_i,
    try_cast(nullif(trim(completion_tokens), '') as bigint) as completion_i,
    try_cast(nullif(trim(total_tokens), '') as bigint) as total_i,
    try_cast(try_cast(nullif(trim(request_duration_ms), '') as double) as bigint) as duration_i,
    lower(nullif(trim(status), '')) as status_l,
    case when json_valid(metadata) then metadata end as meta,
    case when json_valid(request_tags) then request_tags end as tags_json
  from staged s
)
select *,
  case
    when rid is null then 'missing_field'
    when start_ts is null then 'invalid_timestamp'
    when nullif(trim("endTime"), '') is not null and end_ts is null then 'invalid_timestamp'
    when end_ts < start_ts then 'period_reversed'
    when spend_d is null then 'non_numeric'
    when spend_d < 0 then 'negative_spend'
    when nullif(trim(prompt_tokens), '') is not null and prompt_i is null then 'non_numeric'
    when nullif(trim(completion_tokens), '') is not null and completion_i is null then 'non_numeric'
    when nullif(trim(total_tokens), '') is not null and total_i is null then 'non_numeric'
    when prompt_i < 0 or completion_i < 0 or total_i < 0 then 'negative_quantity'
    when status_l is not null and status_l not in ('success', 'failure') then 'invalid_status'
    when row_number() over (partition by rid order by _ord) > 1 then 'duplicate_request_id'
  end as _rule
from s
"""

_REJECT_DETAIL = """
select _source_line, _rule,
  case _rule
    when 'missing_field' then 'request_id is empty'
    when 'invalid_timestamp' then 'startTime/endTime is missing or not a timestamp'
    when 'period_reversed' then 'endTime is before startTime'
    when 'non_numeric' then 'spend or a token count is not a number'
    when 'negative_spend' then 'spend is negative'
    when 'negative_quantity' then 'a token count is negative'
    when 'invalid_status' then 'status is neither success nor failure'
    when 'duplicate_request_id' then 'request_id already seen earlier in the file'
  end,
  case _rule
    when 'missing_field' then 'request_id'
    when 'invalid_timestamp' then case when start_ts is null then 'startTime' else 'endTime' end
    when 'period_reversed' then 'endTime'
    when 'non_numeric' then case when spend_d is null then 'spend' when prompt_i is null then 'prompt_tokens'
                                 when completion_i is null then 'completion_tokens' else 'total_tokens' end
    when 'negative_spend' then 'spend'
    when 'negative_quantity' then 'tokens'
    when 'invalid_status' then 'status'
    when 'duplicate_request_id' then 'request_id'
  end as col,
  case _rule
    when 'missing_field' then request_id
    when 'invalid_timestamp' then case when start_ts is null then "startTime" else "endTime" end
    when 'period_reversed' then "endTime"
    when 'non_numeric' then case when spend_d is null then spend when prompt_i is null then prompt_tokens
                                 when completion_i is null then completion_tokens else total_tokens end
    when 'negative_spend' then spend
    when 'negative_quantity' then concat_ws('/', prompt_tokens, completion_tokens, total_tokens)
    when 'invalid_status' then status
    when 'duplicate_request_id' then request_id
  end
from typed where _rule is not null order by _source_line
"""

_OUTPUT = """
with t as (
  select *,
    json_extract_string(meta, ['$.attempted_retries', '$.attempted_fallbacks', '$.fallback',
      '$.usage_object.prompt_tokens_details.cached_tokens', '$.usage_object.cache_read_input_tokens',
      '$.workload_id', '$.spend_logs_metadata.workload_id']) as m,
    list_filter(coalesce(json_extract_string(tags_json, '$[*]'),
                         json_extract_string(meta, '$.tags[*]')), x -> starts_with(x, 'workload:')) as wl
  from typed where _rule is null
)
select
  rid as request_id,
  start_ts as started_at,
  end_ts as ended_at,
  nullif(trim(custom_llm_provider), '') as provider,
  nullif(trim(model), '') as model,
  nullif(trim(model_group), '') as model_group,
  -- LiteLLM stores the hashed virtual key; a raw `sk-` key in an export is hashed, never kept.
  case when starts_with(api_key, 'sk-') then sha256(api_key) else nullif(trim(api_key), '') end as api_key_hash,
  nullif(trim(team_id), '') as team_id,
  nullif(trim("user"), '') as user_id,
  nullif(trim(end_user), '') as end_user,
  nullif(trim(session_id), '') as session_id,
  coalesce(nullif(substr(wl[1], 10), ''), m[6], m[7]) as workload_id,
  nullif(trim(call_type), '') as call_type,
  status_l as status,
  prompt_i as prompt_tokens,
  completion_i as completion_tokens,
  try_cast(coalesce(m[4], m[5]) as bigint) as cached_tokens,
  coalesce(total_i, prompt_i + completion_i) as total_tokens,
  cast(spend_d as varchar) as spend,
  'USD' as currency,
  try_cast(m[1] as integer) as retries,
  coalesce(try_cast(m[2] as integer) > 0, try_cast(m[3] as boolean), false) as fallback,
  try_cast(nullif(lower(trim(cache_hit)), 'none') as boolean) as cache_hit,
  duration_i as request_duration_ms,
  _source_line
from t order by _ord
"""


def _parse(path: Path, stage) -> ParseOutput:
    path = Path(path)
    con = _connect()
    try:
        try:
            reader_rejects = stage(con, path)
        except duckdb.Error as exc:
            raise UnreadableFile(path, None, f"cannot read as LiteLLM spend log: {exc}") from exc
        con.execute(_TYPED.format(line_expr=_line_expr(con, stage, reader_rejects)))
        out = ParseOutput(rejects=list(reader_rejects))
        out.rejects.extend(Reject(int(r[0]), r[1], r[2], r[3], r[4]) for r in con.execute(_REJECT_DETAIL).fetchall())
        out.tables["api_requests"] = con.execute(_OUTPUT).to_arrow_table()
        _warn(con, out)
        return out
    finally:
        con.close()


def _warn(con: duckdb.DuckDBPyConnection, out: ParseOutput) -> None:
    bad_meta, bad_tags, no_status, raw_keys = con.execute(
        """select count(*) filter (where metadata is not null and trim(metadata) <> '' and meta is null),
                  count(*) filter (where request_tags is not null and trim(request_tags) <> '' and tags_json is null),
                  count(*) filter (where status_l is null),
                  count(*) filter (where starts_with(api_key, 'sk-'))
           from typed where _rule is null"""
    ).fetchone()
    if bad_meta:
        out.warnings.append(f"{bad_meta} rows have metadata that is not valid JSON: retries/cached tokens/workload unknown")
    if bad_tags:
        out.warnings.append(f"{bad_tags} rows have request_tags that are not valid JSON: ignored")
    if no_status:
        out.warnings.append(f"{no_status} rows have no status (older LiteLLM): status is NULL")
    if raw_keys:
        out.warnings.append(f"{raw_keys} rows carried a raw 'sk-' API key: stored as its sha256 only")


def _line_expr(con: duckdb.DuckDBPyConnection, stage, reader_rejects: list[Reject]) -> str:
    """SQL for the 1-based physical line of a staged record (`_ord` = record ordinal).

    JSONL: ordinals are physical line numbers already (lines are staged before JSON checks).
    CSV: line = ordinal + 1 (header) + number of reader-rejected lines before it; for each
    rejected line we store how many good records precede it and look that up.
    """
    if stage is _stage_jsonl:
        return "_ord"
    malformed = sorted(r.line for r in reader_rejects if r.line is not None)
    if not malformed:
        return "_ord + 1"
    con.execute("create temp table reader_rejects (good_before bigint, k bigint)")
    con.executemany("insert into reader_rejects values (?, ?)", [[line - 1 - k, k] for k, line in enumerate(malformed, 1)])
    return "_ord + 1 + coalesce((select max(k) from reader_rejects r where r.good_before < s._ord), 0)"


def parse_csv(path: Path) -> ParseOutput:
    """Parse a LiteLLM spend-log CSV export into `api_requests`."""
    return _parse(path, _stage_csv)


def parse_jsonl(path: Path) -> ParseOutput:
    """Parse a LiteLLM spend-log JSON Lines export into `api_requests`."""
    return _parse(path, _stage_jsonl)


FORMATS = [
    SourceFormat(
        name="litellm_spend_logs_csv",
        family="api_spend",
        detect=detect_csv,
        parse=parse_csv,
        description="LiteLLM_SpendLogs export as CSV (LiteLLM column names) -> api_requests",
    ),
    SourceFormat(
        name="litellm_spend_logs_jsonl",
        family="api_spend",
        detect=detect_jsonl,
        parse=parse_jsonl,
        description="LiteLLM_SpendLogs export as JSON Lines -> api_requests",
    ),
]
