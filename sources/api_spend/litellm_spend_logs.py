"""LiteLLM proxy spend logs (`LiteLLM_SpendLogs` table export), CSV or JSONL.

The export format is ours (no public row sample exists): one request per row/line with the
LiteLLM_SpendLogs column names of litellm 1.110.2's schema.prisma (request_id, call_type,
api_key, spend, total_tokens, prompt_tokens, completion_tokens, startTime, endTime,
completionStartTime, request_duration_ms, model, model_id, model_group, custom_llm_provider,
api_base, user, metadata, cache_hit, request_tags, team_id, organization_id, end_user,
session_id, status). `metadata` and `request_tags` hold JSON text (CSV) or JSON values (JSONL).
Extra columns (messages, response, cache_key, ...) are ignored; header names match
case-insensitively and with or without underscores (startTime == start_time).

Files can hold 10M+ requests, so everything runs in DuckDB. CSV: ONE query reads the file
(read_csv, explicit dialect, all VARCHAR, `store_rejects` so malformed lines are reported) and
types and checks every row straight to Arrow, with no staging table (`_ONE_PASS`). JSONL: lines
are staged as VARCHAR and parsed with DuckDB's JSON functions, then the same query runs over
them. Duplicate request ids, reject details, text trimming and warnings are then finished with
vectorised pyarrow/numpy over the result (`_finish`); no Python runs per row. One record per
physical line is assumed (compact JSON in metadata), which is how `_source_line` (header =
line 1) is derived.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sources.common import (
    ParseOutput,
    Reject,
    SourceFormat,
    UnreadableFile,
    csv_lines_after_rejects,
    head_text,
)

# LiteLLM_SpendLogs columns we read (canonical spelling), all staged as VARCHAR.
COLUMNS = (
    "request_id", "call_type", "api_key", "spend", "total_tokens", "prompt_tokens",
    "completion_tokens", "startTime", "endTime", "completionStartTime", "request_duration_ms",
    "model", "model_id", "model_group", "custom_llm_provider", "api_base", "user", "metadata",
    "cache_hit", "request_tags", "team_id", "organization_id", "end_user", "session_id", "status",
)
REQUIRED = ("request_id", "startTime", "spend")
STATUSES = ("success", "failure")
# A raw API key inside a quarantined line's text: never copied into dq_rejects.
_RAW_KEY = re.compile(r"sk-[A-Za-z0-9_\-]+")


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


def _csv_header(path: Path) -> list[str]:
    with open(path, "rb") as fh:
        header = fh.readline().decode("utf-8-sig", errors="replace").rstrip("\r\n")
    if not header:
        raise UnreadableFile(path, 1, "empty file (no header)")
    return [h.strip().strip('"') for h in header.split(",")]


def _pick(names: list[str], path: Path) -> dict[str, str]:
    """Canonical LiteLLM column -> positional CSV column `cN` (first of duplicates wins)."""
    picked: dict[str, str] = {}
    for i, name in enumerate(names):
        canon = CANONICAL.get(_norm(name))
        if canon and canon not in picked:
            picked[canon] = f"c{i}"
    missing = [c for c in REQUIRED if c not in picked]
    if missing:
        raise UnreadableFile(path, 1, f"not a LiteLLM spend-log export: missing columns {missing}")
    return picked


def _csv_source(path: Path, names: list[str], picked: dict[str, str]) -> str:
    """read_csv of the file, all VARCHAR (every rule is ours, with the raw text reported),
    explicit dialect, `store_rejects`; columns under their canonical names."""
    columns = {f"c{i}": "VARCHAR" for i in range(len(names))}  # positional: odd names need no quoting
    select = ", ".join(
        f"{_quote(picked[c])} as {_quote(c)}" if c in picked else f"cast(null as varchar) as {_quote(c)}"
        for c in COLUMNS
    )
    return (
        f"""(select {select} from read_csv(
            {_sql_str(str(path))}, header = true, auto_detect = false, delim = ',', quote = '"',
            escape = '"', columns = {columns!r}, store_rejects = true, null_padding = false,
            strict_mode = true, encoding = 'utf-8'))"""
    )


def _reader_rejects(con: duckdb.DuckDBPyConnection) -> list[Reject]:
    """Structurally broken CSV lines; DuckDB can report several errors for one line (one per
    surplus column): one reject per line."""
    return [
        Reject(int(line), "malformed_line", f"{etype.lower()}: {msg}", col, _RAW_KEY.sub("sk-***", csv_line or "")[:200])
        for line, etype, msg, col, csv_line in con.execute(
            """select line, arg_min(error_type::varchar, byte_position), arg_min(error_message, byte_position),
                      arg_min(column_name, byte_position), arg_min(csv_line, byte_position)
               from reject_errors group by line order by line"""
        ).fetchall()
    ]


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
    return [Reject(int(o), "invalid_json", "line is not a valid JSON object", None, _RAW_KEY.sub("sk-***", text or ""))
            for o, text in bad]


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


def _later_duplicates(rid: pa.ChunkedArray) -> np.ndarray:
    """True for every row whose request_id already appeared on an earlier row (vectorised)."""
    # pc.unique keeps first-appearance order; ids[i] = index of row i's value in it.
    ids = pc.fill_null(pc.index_in(rid, value_set=pc.unique(rid).drop_null()), -1).to_numpy().astype(np.int64)
    values, first = np.unique(ids, return_index=True)
    first_row = np.full(len(values) + 1, -1, dtype=np.int64)
    first_row[values + 1] = first  # values are -1 (NULL id) and 0..k-1
    return (ids >= 0) & (np.arange(len(ids)) != first_row[ids + 1])


def _finish(tbl: pa.Table, reader_rejects: list[Reject]) -> ParseOutput:
    """Duplicates, rejects and warnings from the one-pass result; good rows as Arrow."""
    out = ParseOutput(rejects=list(reader_rejects))
    rule = tbl["_rule"]
    rid = tbl["request_id"]
    if pc.count_distinct(rid).as_py() < len(rid) - rid.null_count:  # some id repeats (rare)
        dup = pa.array(_later_duplicates(rid))
        rule = pc.if_else(pc.and_(pc.is_null(rule), dup), pa.scalar("duplicate_request_id"), rule)
    bad = pc.is_valid(rule)
    if pc.any(bad).as_py():
        detail = pa.table({
            "line": tbl["_source_line"], "rule": rule, "col": tbl["_rej_col"], "val": tbl["_rej_val"],
            "rid": pc.coalesce(tbl["_rid_raw"], rid),
        }).filter(bad)
        for r in detail.to_pylist():
            if r["rule"] == "duplicate_request_id":
                r["col"], r["val"] = "request_id", r["rid"]
            out.rejects.append(Reject(int(r["line"]), r["rule"], _MESSAGES[r["rule"]], r["col"], r["val"]))
        tbl = tbl.filter(pc.invert(bad))
    flags = tbl["_flags"].to_numpy(zero_copy_only=False)
    bad_meta, bad_tags, raw_keys = (int(np.count_nonzero(flags & bit)) for bit in (1, 2, 4))
    no_status = tbl["status"].null_count
    tbl = tbl.drop_columns(_AUX)
    for name in _PASS_TEXT:
        tbl = tbl.set_column(tbl.column_names.index(name), name, _arrow_clean(tbl[name]))
    out.tables["api_requests"] = tbl
    if bad_meta:
        out.warnings.append(f"{bad_meta} rows have metadata that is not valid JSON: retries/cached tokens/workload unknown")
    if bad_tags:
        out.warnings.append(f"{bad_tags} rows have request_tags that are not valid JSON: ignored")
    if no_status:
        out.warnings.append(f"{no_status} rows have no status (older LiteLLM): status is NULL")
    if raw_keys:
        out.warnings.append(f"{raw_keys} rows carried a raw 'sk-' API key: stored as its sha256 only")
    return out


def parse_csv(path: Path) -> ParseOutput:
    """Parse a LiteLLM spend-log CSV export into `api_requests`.

    One DuckDB query reads the file (all VARCHAR, `store_rejects`) and types and checks every
    row straight to Arrow; no staging table. Line = row index + 2, shifted past the lines the
    reader rejected (one record per physical line, as everywhere in this format).
    """
    path = Path(path)
    names = _csv_header(path)
    picked = _pick(names, path)
    con = _connect()
    try:
        try:
            tbl = con.execute(_one_pass_sql(_csv_source(path, names, picked), "0::bigint")).to_arrow_table()
            reader_rejects = _reader_rejects(con)
        except duckdb.Error as exc:
            raise UnreadableFile(path, None, f"cannot read as LiteLLM spend log: {exc}") from exc
    finally:
        con.close()
    lines = csv_lines_after_rejects(tbl.num_rows, sorted({r.line for r in reader_rejects if r.line is not None}))
    tbl = tbl.set_column(tbl.column_names.index("_source_line"), "_source_line", pa.array(lines))
    return _finish(tbl, reader_rejects)


def parse_jsonl(path: Path) -> ParseOutput:
    """Parse a LiteLLM spend-log JSON Lines export into `api_requests` (line = physical line)."""
    path = Path(path)
    con = _connect()
    try:
        try:
            reader_rejects = _stage_jsonl(con, path)
        except duckdb.Error as exc:
            raise UnreadableFile(path, None, f"cannot read as LiteLLM spend log: {exc}") from exc
        tbl = con.execute(_one_pass_sql("staged", "_ord") + " order by _source_line").to_arrow_table()
    finally:
        con.close()
    return _finish(tbl, reader_rejects)


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
