"""Our own documented CSV record formats for what no public tool emits.

`training_runs`, `eval_runs`, `media_batches`, `memory_fit_tests`, `ops_tests` and
`quality_outcomes` (the quality-filter export). Each is a UTF-8 CSV with a header row; column
names are fixed (see docs/sources/benchmarks.md), order is free, unknown columns are ignored
with a warning. Read with DuckDB (all columns as text, then `try_cast`), so a bad value never
stops the file: the row is returned as a Reject naming the column and value. Timestamps are
ISO 8601; a value with an offset is converted to UTC, one without is taken as UTC.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from sources.benchmarks._hardware import resolve_gpu_model_column
from sources.benchmarks.schema import TABLES, arrow_schema
from sources.common import (
    ParseOutput,
    Reject,
    SourceFormat,
    UnreadableFile,
    csv_lines_after_rejects,
    csv_reader_rejects,
    head_text,
)


@dataclass(frozen=True)
class CsvSpec:
    """One own CSV format: target table, key, detection columns and row rules."""

    name: str
    table: str
    key: tuple[str, ...]
    required: tuple[str, ...]
    enums: dict[str, tuple[str, ...]] = field(default_factory=dict)
    non_negative: tuple[str, ...] = ()
    period: tuple[str, str] | None = None
    # Values no row may leave empty (beyond the key): what the row belongs to and when it ran. A row without
    # them cannot be costed, charged or placed in a month, and reached the marts as a NULL whose blocking
    # checks withheld every source's publication. A file without such a column has every row rejected.
    # (Other required columns may be empty where the row says it another way: gpu_count from an instance.)
    not_empty: tuple[str, ...] = ()
    # (rule, SQL condition that is TRUE for a bad row, message)
    checks: tuple[tuple[str, str, str], ...] = ()


SPECS = [
    CsvSpec(
        "own_training_runs", "training_runs", ("run_id",),
        ("run_id", "workload_id", "gpu_model", "gpu_count", "started_at", "reached_target"),
        enums={"run_kind": ("pretrain", "full_finetune", "lora", "qlora"),
               "outcome": ("completed", "failed", "cancelled", "running")},
        non_negative=("gpu_count", "wall_hours", "time_to_target_hours", "checkpoints_written", "checkpoint_minutes_total", "restarts"),
        period=("started_at", "ended_at"),
        not_empty=("workload_id", "started_at"),
    ),
    CsvSpec(
        "own_eval_runs", "eval_runs", ("run_id",),
        ("run_id", "workload_id", "suite", "tasks_total", "tasks_completed"),
        enums={"outcome": ("completed", "partial", "failed", "cancelled")},
        non_negative=("gpu_count", "wall_hours", "tasks_total", "tasks_completed", "tasks_failed", "retries"),
        period=("started_at", "ended_at"),
        checks=(("tasks_exceed_total", "coalesce(tasks_completed, 0) + coalesce(tasks_failed, 0) > tasks_total",
                 "tasks_completed + tasks_failed exceeds tasks_total"),),
        not_empty=("workload_id", "started_at"),
    ),
    CsvSpec(
        "own_media_batches", "media_batches", ("batch_id",),
        ("batch_id", "workload_id", "gpu_hours", "produced", "accepted"),
        enums={"media_kind": ("image", "video")},
        non_negative=("gpu_count", "gpu_hours", "produced", "accepted", "failed_renders", "seconds_of_video",
                      "queue_minutes", "operator_review_minutes", "moderation_rejected"),
        period=("started_at", "ended_at"),
        checks=(("accepted_exceeds_produced", "accepted > produced", "accepted exceeds produced"),),
        not_empty=("workload_id", "started_at"),
    ),
    CsvSpec(
        "own_memory_fit_tests", "memory_fit_tests", ("test_id",),
        ("test_id", "model_id", "gpu_model", "peak_memory_gb", "safe_margin_pct"),
        non_negative=("gpu_count", "context_length", "concurrency", "peak_memory_gb", "fragmentation_pct", "oom_count"),
    ),
    CsvSpec(
        "own_ops_tests", "ops_tests", ("test_id",),
        ("test_id", "workload_id", "kind", "seconds", "succeeded"),
        enums={"kind": ("cold_start", "model_load", "worker_kill_recovery", "drain", "bad_deploy", "checkpoint_recovery")},
        non_negative=("seconds",),
        not_empty=("workload_id",),
    ),
    CsvSpec(
        "own_quality_outcomes", "quality_outcomes", ("workload_id", "day"),
        ("workload_id", "day", "produced", "accepted", "filter_name"),
        non_negative=("produced", "accepted", "rejected_quality", "rejected_safety"),
        checks=(("accepted_exceeds_produced", "accepted > produced", "accepted exceeds produced"),),
    ),
]

_RULE_FOR_TYPE = {"BIGINT": "non_numeric", "DOUBLE": "non_numeric", "TIMESTAMP": "invalid_timestamp",
                  "DATE": "invalid_date", "BOOLEAN": "invalid_boolean"}


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _header(text: str) -> list[str]:
    first = text.splitlines()[0] if text else ""
    try:
        return [h.strip().lower() for h in next(csv.reader(io.StringIO(first)))]
    except StopIteration:
        return []


def _typed(col: str, typ: str) -> str:
    raw = f"nullif(trim({_q(col)}), '')"
    if typ in ("VARCHAR", "JSON"):
        return raw
    if typ == "TIMESTAMP":
        return f"(try_cast({raw} as timestamptz) at time zone 'UTC')"
    if typ == "BOOLEAN":
        return (f"case lower({raw}) when 'true' then true when 't' then true when '1' then true when 'yes' then true "
                f"when 'false' then false when 'f' then false when '0' then false when 'no' then false end")
    return f"try_cast({raw} as {typ})"


def make_detect(spec: CsvSpec):
    """Detector: the header row names every required column of `spec`."""
    def detect(path: Path, head: bytes) -> bool:
        text = head_text(head)
        if text.lstrip()[:1] in ("{", "["):
            return False
        return set(spec.required) <= set(_header(text))
    return detect


def make_parse(spec: CsvSpec):
    """Parser for one CsvSpec (DuckDB read_csv, typed with try_cast, bad rows rejected)."""
    def parse(path: Path) -> ParseOutput:
        path = Path(path)
        try:
            text = path.read_bytes()[:65536].decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise UnreadableFile(path, 1, f"not UTF-8 text: {exc}") from exc
        header = _header(text)
        missing = [c for c in spec.required if c not in header]
        if missing:
            raise UnreadableFile(path, 1, f"header lacks required columns {missing}")
        if len(set(header)) != len(header):
            raise UnreadableFile(path, 1, "duplicate column names in header")
        cols = TABLES[spec.table]
        out = ParseOutput()
        unknown = [h for h in header if h not in cols]
        if unknown:
            out.warnings.append(f"unknown columns ignored: {unknown}")
        present = [c for c in cols if c in header]

        con = duckdb.connect()
        con.execute("set TimeZone = 'UTC'")
        con.execute("set threads = 1")  # keeps row order so row_number() is the file line
        try:
            # A line with surplus fields or bytes that are not UTF-8 is quarantined alone (store_rejects);
            # a short line is padded with NULLs and judged by the rules below.
            con.execute(
                "create temp table kept as select row_number() over () as _row, * from "
                "read_csv(?, header = true, all_varchar = true, delim = ',', quote = '\"', escape = '\"', "
                "auto_detect = false, columns = " + _columns_struct(header) + ", null_padding = true, "
                "ignore_errors = true, store_rejects = true)",
                [str(path)],
            )
        except duckdb.Error as exc:
            raise UnreadableFile(path, None, f"CSV not readable: {exc}") from exc
        reader_rejects = csv_reader_rejects(con)
        kept = con.execute("select count(*) from kept").fetchone()[0]
        con.register("kept_lines", pa.table({"_row": np.arange(1, kept + 1), "_source_line": csv_lines_after_rejects(
            kept, [r.line for r in reader_rejects])}))
        con.execute("create temp table raw_rows as select kept_lines._source_line, kept.* exclude (_row) "
                    "from kept join kept_lines using (_row) order by _source_line")
        out.rejects.extend(reader_rejects)
        select = ", ".join(
            [f"{_typed(c, cols[c])} as {_q(c)}" if c in present else f"cast(null as {cols[c]}) as {_q(c)}" for c in cols]
        )
        con.execute(f"create temp table typed as select _source_line, {select} from raw_rows")

        checks: list[str] = []
        for c in present:
            typ = cols[c]
            if typ in _RULE_FOR_TYPE:
                checks.append(
                    f"select r._source_line, '{_RULE_FOR_TYPE[typ]}', '{c} is not a valid {typ.lower()}', '{c}', r.{_q(c)} "
                    f"from raw_rows r join typed t using (_source_line) where nullif(trim(r.{_q(c)}), '') is not null and t.{_q(c)} is null"
                )
        for k in spec.key:
            checks.append(f"select _source_line, 'missing_key', '{k} is empty', '{k}', null from typed where {_q(k)} is null")
        for c in spec.not_empty:
            empty = f"nullif(trim({_q(c)}), '') is null" if c in present else "true"
            checks.append(f"select _source_line, 'missing_value', '{c} is empty', '{c}', null from raw_rows where {empty}")
        for c, allowed in spec.enums.items():
            if c in present:
                lst = ", ".join(f"'{a}'" for a in allowed)
                checks.append(f"select _source_line, 'unknown_{c}', '{c} must be one of {'/'.join(allowed)}', '{c}', {_q(c)} "
                              f"from typed where {_q(c)} is not null and {_q(c)} not in ({lst})")
        for c in spec.non_negative:
            if c in present:
                checks.append(f"select _source_line, 'negative_value', '{c} is negative', '{c}', cast({_q(c)} as varchar) "
                              f"from typed where {_q(c)} < 0")
        if spec.period and all(p in present for p in spec.period):
            a, b = spec.period
            checks.append(f"select _source_line, 'period_reversed', '{b} is before {a}', '{b}', cast({_q(b)} as varchar) "
                          f"from typed where {_q(b)} < {_q(a)}")
        for rule, cond, msg in spec.checks:
            if all(c in present for c in cols if c in cond):
                checks.append(f"select _source_line, '{rule}', '{msg}', null, null from typed where {cond}")
        key_cols = ", ".join(_q(k) for k in spec.key)
        checks.append(
            f"select _source_line, 'duplicate_key', 'same {'/'.join(spec.key)} as an earlier row', '{spec.key[0]}', "
            f"cast({_q(spec.key[0])} as varchar) from (select *, row_number() over (partition by {key_cols} order by _source_line) as n "
            f"from typed where {' and '.join(f'{_q(k)} is not null' for k in spec.key)}) where n > 1"
        )
        bad = con.execute(" union all ".join(checks) + " order by 1").fetchall()
        out.rejects.extend(Reject(int(line), rule, msg, col, None if val is None else str(val)) for line, rule, msg, col, val in bad)
        bad_lines = sorted({int(r[0]) for r in bad})
        con.execute("create temp table bad_lines (l bigint)")
        if bad_lines:
            con.executemany("insert into bad_lines values (?)", [[n] for n in bad_lines])
        names = ", ".join(_q(c) for c in cols)
        table = con.execute(
            f"select {names}, _source_line from typed where _source_line not in (select l from bad_lines) order by _source_line"
        ).to_arrow_table()
        con.close()
        table, hw_warnings = resolve_gpu_model_column(table.cast(arrow_schema(spec.table)), path.name)
        out.tables[spec.table] = table
        out.warnings.extend(hw_warnings)
        if table.num_rows == 0:
            out.warnings.append("no valid rows in file")
        return out
    return parse


def _columns_struct(header: list[str]) -> str:
    """DuckDB `columns = {...}` literal: every header column as VARCHAR (header names verbatim)."""
    items = ", ".join(f"'{h.replace(chr(39), chr(39) * 2)}': 'VARCHAR'" for h in header)
    return "{" + items + "}"


FORMATS = [
    SourceFormat(s.name, "benchmarks", make_detect(s), make_parse(s), f"GPU Ledger own CSV format for {s.table}")
    for s in SPECS
]
