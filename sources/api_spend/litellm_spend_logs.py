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
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sources.api_spend._litellm_sql import _AUX, _MESSAGES, _PASS_TEXT, _arrow_clean, _json_key, _one_pass_sql
from sources.common import (
    ParseOutput,
    Reject,
    SourceFormat,
    UnreadableFile,
    csv_lines_after_rejects,
    head_text,
    scratch_connection,
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
    # UTC (naive timestamps in the export are UTC), rowid == record order (for _source_line); its own
    # temporary tables (`lines`, `staged`, the reader's rejects).
    return scratch_connection()


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
        tables=("api_requests",),
        description="LiteLLM_SpendLogs export as CSV (LiteLLM column names) -> api_requests",
    ),
    SourceFormat(
        name="litellm_spend_logs_jsonl",
        family="api_spend",
        detect=detect_jsonl,
        parse=parse_jsonl,
        tables=("api_requests",),
        description="LiteLLM_SpendLogs export as JSON Lines -> api_requests",
    ),
]
