"""`dcgm_csv`: DCGM samples as one CSV row per GPU per sample time -> raw.gpu_samples.

This is the bulk format (a month of 64 GPUs at 1-minute samples is ~2.9M rows). DuckDB's
read_csv does all parsing and typing; the rest (sentinels, line numbers, series checks) is
vectorised numpy/pyarrow; there is no Python row loop. Header (names are case-insensitive):

    timestamp, hostname, gpu, uuid, modelName, GPU_I_PROFILE, GPU_I_ID,
    namespace, pod, container, job_id, DCGM_FI_<FIELD>...

`timestamp` is ISO 8601 (`2026-01-01T00:01:00Z`; without an offset it is taken as UTC). Every
column except `timestamp` and one known DCGM_FI_* field is optional. DCGM_FI_* columns not in
METRIC_COLUMNS are ignored (listed in a warning). DCGM blank codes become NULL.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile, head_text
from sources.usage._series import check_series
from sources.usage._shared import (
    COUNTER_COLUMNS,
    FP64_BLANK_MIN,
    INT32_BLANK_MAX,
    INT32_BLANK_MIN,
    INT64_BLANK_MIN,
    SAMPLE_COLUMNS,
    line_numbers,
    sentinel_warning,
    unknown_model_warning,
)
from sources.usage.dcgm_prom import METRIC_COLUMNS

FORMAT_NAME = "dcgm_csv"

# CSV header (lower-cased) -> gpu_samples column, for identity/attribution columns.
ID_COLUMNS = {
    "timestamp": "sampled_at",
    "hostname": "host",
    "gpu": "gpu_index",
    "uuid": "gpu_uuid",
    "modelname": "gpu_model",
    "gpu_i_profile": "mig_profile",
    "gpu_i_id": "mig_instance_id",
    "namespace": "namespace",
    "pod": "pod",
    "container": "container",
    "job_id": "job_id",
}
# DuckDB's reject_errors.error_type values ("TOO MANY COLUMNS", "MISSING COLUMNS", ...), spaces as `_`.
_REJECT_RULES = {"CAST": "non_numeric", "TOO_MANY_COLUMNS": "wrong_field_count", "TOO_FEW_COLUMNS": "wrong_field_count",
                 "MISSING_COLUMNS": "wrong_field_count"}


def _header(head: bytes) -> list[str]:
    lines = head_text(head).splitlines()
    return [h.strip() for h in next(csv.reader(io.StringIO(lines[0])), [])] if lines else []


def detect(path: Path, head: bytes) -> bool:
    """Header with a timestamp, a GPU identity and at least one DCGM_FI_* column."""
    cols = {c.lower() for c in _header(head)}
    return "timestamp" in cols and bool(cols & {"uuid", "gpu"}) and any(c.startswith("dcgm_fi_") for c in cols)


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _timestamp_rejects(path: Path, ts_col: int, line_numbers: list[int]) -> list[Reject]:
    """A row whose timestamp read as NULL: `missing_timestamp` when the field is empty, else
    `invalid_timestamp` with the text (DuckDB reads some words, such as 'yesterday', as NULL
    instead of rejecting the line). Only those lines are read again, so a clean file costs nothing."""
    if not line_numbers:
        return []
    wanted, texts = set(line_numbers), {}
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        for n, line in enumerate(fh, start=1):
            if n in wanted:
                fields = next(csv.reader([line]), [])
                texts[n] = fields[ts_col].strip() if ts_col < len(fields) else ""
                if len(texts) == len(wanted):
                    break
    out = []
    for n in line_numbers:
        text = texts.get(n, "")
        if text:
            out.append(Reject(n, "invalid_timestamp", f"timestamp {text[:40]!r} is not a date and time", "timestamp",
                              text[:200]))
        else:
            out.append(Reject(n, "missing_timestamp", "row has no timestamp", "timestamp", None))
    return out


def parse(path: Path) -> ParseOutput:
    """Read a dcgm_csv file with DuckDB into gpu_samples (sentinels NULL, series checked)."""
    with open(path, "rb") as fh:
        header = _header(fh.read(65536))
    lower = [h.lower() for h in header]
    if "timestamp" not in lower:
        raise UnreadableFile(path, 1, "no header with a 'timestamp' column")
    metrics = {h: METRIC_COLUMNS[h.upper()][0] for h in header if h.upper() in METRIC_COLUMNS}
    ignored = [h for h in header if h.upper().startswith("DCGM_FI_") and h.upper() not in METRIC_COLUMNS]
    if not metrics:
        raise UnreadableFile(path, 1, "no known DCGM_FI_* metric column in header")

    # Explicit types: DuckDB's parser converts numbers and timestamps at full speed; a bad value
    # rejects its line (store_rejects), never the file.
    types = {h: "VARCHAR" for h in header}
    types[header[lower.index("timestamp")]] = "TIMESTAMPTZ"
    for h in metrics:
        types[h] = "DOUBLE"
    col_spec = "{" + ", ".join(f"{_lit(h)}: {_lit(t)}" for h, t in types.items()) + "}"
    select = []
    for h in header:
        if h in metrics:
            select.append(f"{_q(h)} as {_q(metrics[h])}")
        elif h.lower() in ID_COLUMNS:
            target = ID_COLUMNS[h.lower()]
            # read_csv already turns empty fields (quoted or not) into NULL; no per-value
            # trim/nullif here, it cost ~40% of the read. Values are taken as written.
            select.append(f"{_q(h)} as {_q(target)}")

    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")  # timestamps without offset are UTC
    con.execute("set enable_progress_bar = false")
    try:
        raw = con.execute(
            f"""select {', '.join(select)} from read_csv({_lit(str(path))},
                header = true, delim = ',', quote = '"', columns = {col_spec},
                auto_detect = false, ignore_errors = true, store_rejects = true)"""
        ).to_arrow_table()
    except duckdb.Error as exc:
        raise UnreadableFile(path, None, f"cannot read as CSV: {exc}") from exc
    rejects = _rejects(con)
    con.close()

    # read_csv keeps file order; line = row index + 2 (header is line 1), shifted past the
    # lines DuckDB rejected (WITH ORDINALITY would do this too, but doubles the read time).
    lines = line_numbers(raw.num_rows, rejects)
    # TIMESTAMPTZ arrives as UTC epoch values tagged tz=UTC: dropping the tag is free.
    ts = raw.column("sampled_at").cast(pa.timestamp("us", tz="UTC")).cast(pa.timestamp("us"))
    no_ts = ts.is_null().to_numpy(zero_copy_only=False)
    rejects += _timestamp_rejects(path, lower.index("timestamp"), [int(n) for n in lines[no_ts]])

    sentinels: Counter[str] = Counter()
    columns: dict[str, pa.Array | pa.ChunkedArray] = {}
    for col in set(metrics.values()):
        columns[col], n = _null_sentinels(raw.column(col), "fb_used_mib" if col == "_fb_free_mib" else col)
        if n:
            sentinels[col] += n
    if "_fb_free_mib" in columns and "fb_used_mib" in columns:
        total = pc.add(columns["fb_used_mib"], columns.pop("_fb_free_mib"))  # FB_TOTAL missing: used + free
        columns["fb_total_mib"] = pc.coalesce(columns["fb_total_mib"], total) if "fb_total_mib" in columns else total
    columns.pop("_fb_free_mib", None)

    arrays = []
    n_rows = raw.num_rows
    for col, typ in SAMPLE_COLUMNS.items():
        if col == "sampled_at":
            arrays.append(ts)
        elif col == "_source_line":
            arrays.append(pa.array(lines, type=pa.int64()))
        elif col == "source_format":
            arrays.append(pa.array(np.full(n_rows, FORMAT_NAME, dtype=object), type=pa.string()))
        elif col in columns:
            arrays.append(columns[col])
        elif col in raw.column_names:
            arrays.append(raw.column(col).cast(typ))
        else:
            arrays.append(pa.nulls(n_rows, type=typ))
    table = pa.Table.from_arrays(arrays, names=list(SAMPLE_COLUMNS))
    if no_ts.any():
        table = table.filter(pa.array(~no_ts))

    warnings: list[str] = []
    if ignored:
        warnings.append(f"DCGM columns not mapped to gpu_samples (ignored): {', '.join(ignored)}")
    warnings += sentinel_warning(sentinels)
    table, series_warnings = check_series(table)
    models = pc.unique(table.column("gpu_model")).to_pylist()
    warnings += unknown_model_warning(models) + series_warnings
    return ParseOutput(tables={"gpu_samples": table}, rejects=rejects, warnings=warnings)


def _null_sentinels(col: pa.ChunkedArray, column: str) -> tuple[pa.ChunkedArray | pa.Array, int]:
    """Replace DCGM blank codes by NULL (vectorised); return the column and how many were found."""
    values = pc.fill_null(col, np.nan).to_numpy()
    with np.errstate(invalid="ignore"):
        mask = values >= INT64_BLANK_MIN
        if column not in COUNTER_COLUMNS:
            mask |= (values >= FP64_BLANK_MIN) | ((values >= INT32_BLANK_MIN) & (values <= INT32_BLANK_MAX))
    n = int(np.count_nonzero(mask))
    if not n:
        return col, 0
    return pa.array(values, mask=mask | np.isnan(values), type=pa.float64()), n


def _rejects(con: duckdb.DuckDBPyConnection) -> list[Reject]:
    """Lines DuckDB could not convert (bad number, bad timestamp, wrong field count)."""
    rows = con.execute(
        "select line, column_name, error_type, error_message, csv_line from reject_errors order by line"
    ).fetchall()
    out = []
    seen: set[int] = set()
    for line, column, etype, message, csv_line in rows:
        if int(line) in seen:  # a short line is reported once per missing column: keep the first
            continue
        seen.add(int(line))
        rule = _REJECT_RULES.get(str(etype).replace(" ", "_"), "unreadable_row")
        if rule == "non_numeric" and column and column.lower() == "timestamp":
            rule = "invalid_timestamp"
        out.append(Reject(int(line), rule, str(message).splitlines()[0][:200], column, (csv_line or "")[:200]))
    return out


FORMATS = [
    SourceFormat(
        name=FORMAT_NAME,
        family="usage",
        detect=detect,
        parse=parse,
        description="DCGM samples as CSV (timestamp, hostname, gpu, uuid, modelName, ..., DCGM_FI_* columns); bulk format",
    )
]
