"""`dcgm_csv`: DCGM samples as one CSV row per GPU per sample time -> raw.gpu_samples.

This is the bulk format (a month of 64 GPUs at 1-minute samples is ~2.9M rows). DuckDB's
read_csv does all parsing and typing; the rest (sentinels, line numbers, series checks) is
vectorised numpy/pyarrow; there is no Python row loop. Header (names are case-insensitive):

    timestamp, hostname, gpu, uuid, modelName, GPU_I_PROFILE, GPU_I_ID,
    namespace, pod, container, job_id (or hpc_job), DCGM_FI_<FIELD>...

`timestamp` is ISO 8601 (`2026-01-01T00:01:00Z`; without an offset it is taken as UTC). Every
column except `timestamp` and one known DCGM_FI_* field is optional. DCGM_FI_* columns not in
METRIC_COLUMNS are ignored (listed in a warning). DCGM blank codes become NULL.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sources.common import (
    BatchedParse,
    ParseOutput,
    Reject,
    SourceFormat,
    StreamEnd,
    UnreadableFile,
    collect,
    head_text,
    provisional_to_file_lines,
)
from sources.usage._series import SERIES_KEY, SeriesCodes, _ts_micros, series_findings
from sources.usage._shared import (
    COUNTER_COLUMNS,
    FP64_BLANK_MIN,
    INT32_BLANK_MAX,
    INT32_BLANK_MIN,
    INT64_BLANK_MIN,
    SAMPLE_COLUMNS,
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
    # dcgm-exporter's HPC job mapping labels a GPU's samples `hpc_job`; it wins over `job_id` when a file
    # has both, as the label does in dcgm_prom.LABEL_COLUMNS.
    "hpc_job": "job_id",
    "job_id": "job_id",
}
_ID_ORDER = list(ID_COLUMNS)
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


# Rows per batch of the batched parse: one Parquet row group of raw.gpu_samples (warehouse/raw_files.py),
# ~25 MB of typed columns whatever the size of the file (a day of a 1,000-GPU fleet is 1.44M rows, a
# month in one file 43M). The loader holds a few copies of a batch for each of the files it prepares at
# once: ingesting eight 368,640-row days peaked at 648 MB RSS with 500,000-row batches, 507 MB with
# these, for the same CPU seconds (8.8 / 9.2 s at load 30).
BATCH_ROWS = 122_880
# The parser's own DuckDB session: the reader streams, so this only bounds its buffers.
READER_MEMORY_LIMIT = "1GB"


def parse(path: Path) -> ParseOutput:
    """Read a dcgm_csv file with DuckDB into gpu_samples (sentinels NULL, series checked)."""
    return collect(stream(path))


def stream(path: Path, batch_rows: int = BATCH_ROWS, *, threads: int | None = None) -> BatchedParse:
    """The same parse in bounded batches (the pipeline's loader uses this; `parse` collects it).
    `threads`: the reader's DuckDB threads (None: one per core). The loader passes 1 when it parses
    several files at once (warehouse/ingest.py): two files with one thread each keep both cores busy,
    and two threads each only added switching (eight 368,640-row days, two alternating runs each at
    load 21-25: 7.4 / 8.0 CPU s with one thread per file, 8.3 / 8.9 with two)."""
    with open(path, "rb") as fh:
        header = _header(fh.read(65536))
    lower = [h.lower() for h in header]
    if "timestamp" not in lower:
        raise UnreadableFile(path, 1, "no header with a 'timestamp' column")
    metrics = {h: METRIC_COLUMNS[h.upper()][0] for h in header if h.upper() in METRIC_COLUMNS}
    if not metrics:
        raise UnreadableFile(path, 1, "no known DCGM_FI_* metric column in header")
    return _DcgmBatches(path, header, metrics, batch_rows, threads)


class _DcgmBatches:
    """dcgm_csv in batches: DuckDB streams typed rows; per batch the sentinels become NULL and rows
    without a time are set aside; per file only narrow arrays (series, pod, time, energy, line:
    ~40 bytes a row) stay for the duplicate/order/gap checks, which run once at the end."""

    table = "gpu_samples"

    def __init__(self, path: Path, header: list[str], metrics: dict[str, str], batch_rows: int,
                 threads: int | None = None) -> None:
        self.path, self.header, self.metrics, self.batch_rows = path, header, metrics, batch_rows
        self.threads = threads
        self.ts_col = [h.lower() for h in header].index("timestamp")
        self.sentinels: Counter[str] = Counter()
        self.models: set[str | None] = set()
        self.no_ts: list[np.ndarray] = []  # provisional lines of rows whose time read as NULL
        self.narrow: list[tuple[np.ndarray, ...]] = []
        self.series, self.pods = SeriesCodes(SERIES_KEY), SeriesCodes(("pod",))
        self.reader_rejects: list[Reject] = []

    def _sql(self) -> str:
        # Explicit types: DuckDB's parser converts numbers and timestamps at full speed; a bad value
        # rejects its line (store_rejects), never the file.
        types = {h: "VARCHAR" for h in self.header}
        types[self.header[self.ts_col]] = "TIMESTAMPTZ"
        for h in self.metrics:
            types[h] = "DOUBLE"
        col_spec = "{" + ", ".join(f"{_lit(h)}: {_lit(t)}" for h, t in types.items()) + "}"
        select = []
        sources: dict[str, list[str]] = {}
        for h in self.header:
            if h in self.metrics:
                select.append(f"{_q(h)} as {_q(self.metrics[h])}")
            elif h.lower() in ID_COLUMNS:
                sources.setdefault(ID_COLUMNS[h.lower()], []).append(h)
        for column, headers in sources.items():
            # read_csv already turns empty fields (quoted or not) into NULL; no per-value
            # trim/nullif here, it cost ~40% of the read. Values are taken as written. Two headers for
            # one column (job_id and hpc_job): the first non-empty in ID_COLUMNS order, as dcgm_prom does.
            headers.sort(key=lambda h: _ID_ORDER.index(h.lower()))
            expr = _q(headers[0]) if len(headers) == 1 else f"coalesce({', '.join(_q(h) for h in headers)})"
            select.append(f"{expr} as {_q(column)}")
        return (f"select {', '.join(select)} from read_csv({_lit(str(self.path))}, header = true, delim = ',', "
                f"quote = '\"', columns = {col_spec}, auto_detect = false, ignore_errors = true, store_rejects = true)")

    def batches(self) -> Iterator[pa.Table]:
        """Typed gpu_samples batches in file order, `_source_line` provisional (row index + 2)."""
        config: dict[str, str | int] = {"memory_limit": READER_MEMORY_LIMIT}
        if self.threads:
            config["threads"] = self.threads
        con = duckdb.connect(config=config)
        con.execute("set TimeZone = 'UTC'")  # timestamps without offset are UTC
        con.execute("set enable_progress_bar = false")
        try:
            reader = con.execute(self._sql()).to_arrow_reader(self.batch_rows)
            offset = 0
            while True:
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    break
                raw = pa.Table.from_batches([batch])
                yield self._shape(raw, offset)
                offset += raw.num_rows
            self.reader_rejects = _rejects(con)
        except duckdb.Error as exc:
            raise UnreadableFile(self.path, None, f"cannot read as CSV: {exc}") from exc
        finally:
            con.close()

    def _shape(self, raw: pa.Table, offset: int) -> pa.Table:
        n_rows = raw.num_rows
        lines = np.arange(offset + 2, offset + 2 + n_rows, dtype=np.int64)
        # TIMESTAMPTZ arrives as UTC epoch values tagged tz=UTC: dropping the tag is free.
        ts = raw.column("sampled_at").cast(pa.timestamp("us", tz="UTC")).cast(pa.timestamp("us"))
        no_ts = ts.is_null().to_numpy(zero_copy_only=False)
        columns: dict[str, pa.Array | pa.ChunkedArray] = {}
        for col in set(self.metrics.values()):
            columns[col], n = _null_sentinels(raw.column(col), "fb_used_mib" if col == "_fb_free_mib" else col)
            if n:
                self.sentinels[col] += n
        if "_fb_free_mib" in columns and "fb_used_mib" in columns:
            total = pc.add(columns["fb_used_mib"], columns.pop("_fb_free_mib"))  # FB_TOTAL missing: used + free
            columns["fb_total_mib"] = pc.coalesce(columns["fb_total_mib"], total) if "fb_total_mib" in columns else total
        columns.pop("_fb_free_mib", None)
        arrays = []
        for col, typ in SAMPLE_COLUMNS.items():
            if col == "sampled_at":
                arrays.append(ts)
            elif col == "_source_line":
                arrays.append(pa.array(lines, type=pa.int64()))
            elif col == "source_format":
                arrays.append(pa.repeat(pa.scalar(FORMAT_NAME), n_rows))
            elif col in columns:
                arrays.append(columns[col])
            elif col in raw.column_names:
                arrays.append(raw.column(col).cast(typ))
            else:
                arrays.append(pa.nulls(n_rows, type=typ))
        table = pa.Table.from_arrays(arrays, names=list(SAMPLE_COLUMNS))
        if no_ts.any():
            self.no_ts.append(lines[no_ts])
            table = table.filter(pa.array(~no_ts))
        self.models.update(pc.unique(table.column("gpu_model")).to_pylist())
        t_us, valid = _ts_micros(table)
        energy = pc.fill_null(table.column("energy_mj").combine_chunks(), np.nan).to_numpy(zero_copy_only=False)
        line = table.column("_source_line").combine_chunks().to_numpy(zero_copy_only=False)
        self.narrow.append((self.series.codes(table), self.pods.codes(table), t_us, valid, energy, line))
        return table

    def finish(self) -> StreamEnd:
        """Rejects, warnings and the corrections, once `batches()` is exhausted."""
        rejected = sorted({r.line for r in self.reader_rejects if r.line is not None})
        no_ts = np.concatenate(self.no_ts) if self.no_ts else np.zeros(0, dtype=np.int64)
        rejects = self.reader_rejects + _timestamp_rejects(
            self.path, self.ts_col, [int(n) for n in provisional_to_file_lines(no_ts, rejected)])
        rejects.sort(key=lambda r: r.line or 0)
        ignored = [h for h in self.header if h.upper().startswith("DCGM_FI_") and h.upper() not in METRIC_COLUMNS]
        warnings: list[str] = []
        if ignored:
            warnings.append(f"DCGM columns not mapped to gpu_samples (ignored): {', '.join(ignored)}")
        warnings += sentinel_warning(self.sentinels)
        drop_lines: list[int] = []
        if self.narrow:
            series, pod, ts, valid, energy, line = (np.concatenate(parts) for parts in zip(*self.narrow))
            self.narrow = []
            drop, series_warnings = series_findings(series, pod, ts, valid, energy, line)
            drop_lines = [int(n) for n in line[drop]]
        else:
            series_warnings = []
        warnings += unknown_model_warning(self.models) + series_warnings
        return StreamEnd(rejects=rejects, warnings=warnings, drop_lines=drop_lines, rejected_lines=rejected)


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


# A dcgm-exporter metrics configuration line: `DCGM_FI_DEV_SM_CLOCK,  gauge, SM clock frequency (in MHz).`
_COUNTER_LINE = re.compile(r"^\s*DCGM_FI_\w+\s*,\s*(gauge|counter|label)\s*,", re.M)


def near_miss(path: Path, head: bytes) -> str | None:
    """dcgm-exporter's metrics configuration (`default-counters.csv`, `dcp-metrics-included.csv`): which DCGM
    fields to export, not samples of them."""
    if _COUNTER_LINE.search(head_text(head)):
        return ("it is dcgm-exporter's metrics configuration (which DCGM fields to export, e.g. "
                "`default-counters.csv`), not samples: give the exporter's scraped metrics (`curl HOST:9400/metrics`) "
                "or DCGM samples as CSV")
    return None


FORMATS = [
    SourceFormat(
        name=FORMAT_NAME,
        family="usage",
        detect=detect,
        parse=parse,
        stream=stream,
        tables=("gpu_samples",),
        description="DCGM samples as CSV (timestamp, hostname, gpu, uuid, modelName, ..., DCGM_FI_* columns); bulk format",
        near_miss=near_miss,
    )
]
