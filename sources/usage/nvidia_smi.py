"""nvidia-smi CSV captures -> raw.gpu_samples and raw.gpu_processes.

Two formats, both `--format=csv` (with or without `,nounits`), read with DuckDB:
- `nvidia_smi_query_gpu`: `nvidia-smi --query-gpu=<fields> --format=csv [-l N]`, one row per GPU
  per sample. Values carry units (`81559 MiB`, `631.95 W`) and fields are separated by ", ";
  `[N/A]`, `[Not Supported]`, `[Unknown Error]`, `[Requested functionality has been deprecated]`
  and other bracketed placeholders become NULL. With MIG enabled `utilization.gpu` is `[N/A]`:
  the row is the physical GPU, flagged mig_enabled, with NULL utilisation (per-slice utilisation
  only exists in DCGM as GR_ENGINE_ACTIVE).
- `nvidia_smi_compute_apps`: `--query-compute-apps=timestamp,gpu_name,gpu_bus_id,gpu_serial,
  gpu_uuid,pid,process_name,used_memory --format=csv`; a header-only file is 0 rows.
`timestamp` (`2026/07/14 08:12:53.353`) is host local time without a zone: it is taken as UTC
and a warning says so.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import duckdb
import pyarrow as pa

from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile, head_text
from sources.usage._series import check_series
from sources.usage._shared import PROCESS_COLUMNS, SAMPLE_COLUMNS, line_numbers, unknown_model_warning

# query-gpu field (units stripped, lower case) -> gpu_samples column; first present wins.
GPU_FIELDS: dict[str, tuple[str, ...]] = {
    "sampled_at": ("timestamp",),
    "host": ("hostname",),
    "gpu_index": ("index",),
    "gpu_uuid": ("uuid",),
    "gpu_model": ("name",),
    "gpu_util_pct": ("utilization.gpu",),
    "mem_copy_util_pct": ("utilization.memory",),
    "fb_used_mib": ("memory.used",),
    "fb_total_mib": ("memory.total",),
    "power_w": ("power.draw", "power.draw.average", "power.draw.instant"),
    "gpu_temp_c": ("temperature.gpu",),
    "memory_temp_c": ("temperature.memory",),
    "sm_clock_mhz": ("clocks.current.sm", "clocks.sm"),
    "mig_enabled": ("mig.mode.current",),
}
PROCESS_FIELDS: dict[str, tuple[str, ...]] = {
    "sampled_at": ("timestamp",),
    "gpu_uuid": ("gpu_uuid",),
    "gpu_model": ("gpu_name",),
    "gpu_bus_id": ("gpu_bus_id",),
    "pid": ("pid",),
    "process_name": ("process_name", "name"),
    "used_memory_mib": ("used_gpu_memory", "used_memory"),
}
TZ_WARNING = "nvidia-smi timestamps carry no time zone (host local time): taken as UTC"


def _header(head: bytes) -> list[str]:
    lines = head_text(head).splitlines()
    return [h.strip() for h in next(csv.reader(io.StringIO(lines[0]), skipinitialspace=True), [])] if lines else []


def _base(name: str) -> str:
    """`memory.used [MiB]` -> `memory.used` (the unit is in the header with plain --format=csv)."""
    return name.split(" [", 1)[0].strip().lower()


def detect_query_gpu(path: Path, head: bytes) -> bool:
    """Header of nvidia-smi --query-gpu: dotted field names plus a GPU identity field."""
    cols = {_base(h) for h in _header(head)}
    dotted = {"utilization.gpu", "memory.used", "memory.total", "power.draw", "temperature.gpu", "pci.bus_id"}
    return bool(cols & {"uuid", "index", "name", "pci.bus_id"}) and bool(cols & dotted)


def detect_compute_apps(path: Path, head: bytes) -> bool:
    """Header of nvidia-smi --query-compute-apps."""
    cols = {_base(h) for h in _header(head)}
    return "pid" in cols and bool(cols & {"used_gpu_memory", "used_memory"}) and bool(cols & {"gpu_uuid", "gpu_bus_id"})


# Values only nvidia-smi writes, by which a CSV without its header line is still known as its output.
_SMI_VALUE = re.compile(r"\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?"  # timestamp
                        r"|(GPU|MIG)-[0-9a-fA-F-]{8,}"  # uuid, gpu_uuid
                        r"|[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]")  # pci.bus_id, gpu_bus_id
QUERY_EXAMPLE = "nvidia-smi --query-gpu=timestamp,uuid,index,name,utilization.gpu,memory.used,memory.total --format=csv -l 60"


def near_miss(path: Path, head: bytes) -> str | None:
    """Other nvidia-smi output in the usage folder, named with what to capture instead: a query without its
    header line (`--format=csv,noheader`: the fields cannot be named), the summary table or `-q` report
    (one snapshot, not samples over time), or the MIG profile tables (what slices a GPU can have)."""
    text = head_text(head)
    if "==============NVSMI LOG==============" in text or ("NVIDIA-SMI " in text and "Driver Version:" in text):
        return ("it is an nvidia-smi report (`nvidia-smi` or `nvidia-smi -q`): one snapshot, not samples over time; "
                f"capture `{QUERY_EXAMPLE}`")
    if "GPU instance profiles:" in text or re.search(r"^GPU\s+\d+ Profile ID\s+\d+ Placements?", text, re.M):
        return ("it is nvidia-smi's MIG profile table (`nvidia-smi mig -lgip` or `-lgipp`): the slices a GPU can have, "
                "not their use (the ledger's MIG profiles are in reference/); slice usage comes from DCGM or a "
                "query of MIG devices")
    first = _header(head)  # the first line's fields, as a header would be read
    if len(first) > 1 and any(_SMI_VALUE.fullmatch(v) for v in first):
        return ("it looks like a GPU query's CSV without its header line (nvidia-smi `--format=csv,noheader`): its "
                "fields cannot be named; export with `--format=csv`, or add the query's field list (e.g. `timestamp, "
                "pid, process_name, gpu_uuid, used_memory`) as the first line")
    return None


def _read(path: Path, fields: dict[str, tuple[str, ...]]) -> tuple[pa.Table, dict[str, str], list[Reject]]:
    """Read the CSV as text with DuckDB; return trimmed text columns named by our columns."""
    with open(path, "rb") as fh:
        header = _header(fh.read(65536))
    if not header:
        raise UnreadableFile(path, 1, "empty file (no header)")
    bases = [_base(h) for h in header]
    chosen: dict[str, int] = {}
    for col, names in fields.items():
        for name in names:
            if name in bases:
                chosen[col] = bases.index(name)
                break
    # Positional names avoid DuckDB's header handling of names with spaces and brackets.
    col_spec = "{" + ", ".join(f"'c{i}': 'VARCHAR'" for i in range(len(header))) + "}"
    con = duckdb.connect()
    con.execute("set enable_progress_bar = false")
    sel = ", ".join(f"nullif(trim(c{i}), '') as \"{col}\"" for col, i in chosen.items())
    p = str(path).replace("'", "''")
    try:
        table = con.execute(
            f"""select {sel or '1 as _none'}
            from read_csv('{p}', header = false, skip = 1, delim = ',', quote = '"', columns = {col_spec},
                          auto_detect = false, null_padding = true, ignore_errors = true, store_rejects = true)"""
        ).to_arrow_table()
        bad = con.execute("select line, error_message, csv_line from reject_errors").fetchall()
    except duckdb.Error as exc:
        raise UnreadableFile(path, None, f"cannot read as CSV: {exc}") from exc
    rejects = [Reject(int(line), "wrong_field_count", str(msg)[:200], None, (raw or "")[:200]) for line, msg, raw in bad]
    table = table.append_column("_source_line", pa.array(line_numbers(table.num_rows, rejects), type=pa.int64()))
    return table, {col: header[i] for col, i in chosen.items()}, rejects


# Placeholders: `[N/A]`, `[Not Supported]`, `[Requested functionality has been deprecated]`, ...
# and bare `N/A` (L40S temperature.memory).
_PLACEHOLDER = "({c} like '[%' or upper({c}) in ('N/A', 'NOT SUPPORTED', 'UNKNOWN'))"
_NUM = r"regexp_extract({c}, '^[-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?')"


def _typed_sql(columns: dict[str, pa.DataType], present: set[str], extra: str = "") -> str:
    """SQL converting the text columns: placeholders `[...]` -> NULL, units stripped, timestamps."""
    parts = []
    for col, typ in columns.items():
        q = f'"{col}"'
        if col == "_source_line":
            parts.append("_source_line")
        elif col not in present:
            continue
        elif col == "sampled_at":
            parts.append(
                "coalesce(try_strptime(sampled_at, '%Y/%m/%d %H:%M:%S.%g'), try_strptime(sampled_at, '%Y/%m/%d %H:%M:%S'),"
                " try_cast(sampled_at as timestamp)) as sampled_at"
            )
        elif col == "mig_enabled":
            parts.append("case lower(mig_enabled) when 'enabled' then true when 'disabled' then false end as mig_enabled")
        elif typ in (pa.float64(), pa.int64()):
            num = _NUM.format(c=f'"{col}"')
            sqltype = "double" if typ == pa.float64() else "bigint"
            parts.append(f"case when {_PLACEHOLDER.format(c=q)} then null else try_cast(nullif({num}, '') as {sqltype}) end as \"{col}\"")
        else:
            parts.append(f"case when {_PLACEHOLDER.format(c=q)} then null else {q} end as {q}")
    return ", ".join(parts) + extra


def _finish(con: duckdb.DuckDBPyConnection, sql: str, schema: dict[str, pa.DataType]) -> pa.Table:
    out = con.execute(sql).to_arrow_table()
    arrays = [out.column(c).cast(t) if c in out.column_names else pa.nulls(out.num_rows, t) for c, t in schema.items()]
    return pa.Table.from_arrays(arrays, names=list(schema))


def _non_numeric(con: duckdb.DuckDBPyConnection, numeric: list[str], present: set[str], header: dict[str, str]) -> list[Reject]:
    """Values that are neither a number (with unit) nor a bracketed placeholder."""
    rejects: list[Reject] = []
    for col in numeric:
        if col not in present:
            continue
        num = _NUM.format(c=f'"{col}"')
        for line, value in con.execute(
            f"select _source_line, \"{col}\" from _tt where \"{col}\" is not null and not {_PLACEHOLDER.format(c=chr(34) + col + chr(34))} "
            f"and nullif({num}, '') is null order by 1 limit 100"
        ).fetchall():
            rejects.append(Reject(int(line), "non_numeric", f"{header[col]} is not a number", header[col], value))
    return rejects


def parse_query_gpu(path: Path) -> ParseOutput:
    """nvidia-smi --query-gpu CSV -> gpu_samples (one row per GPU per sample)."""
    text, header, rejects = _read(path, GPU_FIELDS)
    con = duckdb.connect()
    con.register("_t", text)
    present = set(header)
    # Repeated header lines (several captures appended) are dropped, not rejected.
    where = " where coalesce(sampled_at, '') <> 'timestamp'" if "sampled_at" in present else ""
    con.execute(f"create temp view _tt as select * from _t{where}")
    numeric = [c for c in present if SAMPLE_COLUMNS[c] == pa.float64()]
    rejects += _non_numeric(con, numeric, present, header)
    sql = f"select {_typed_sql(SAMPLE_COLUMNS, present, extra=', ' + repr('nvidia_smi_query_gpu') + ' as source_format')} from _tt"
    table = _finish(con, sql, SAMPLE_COLUMNS)
    warnings: list[str] = []
    if "sampled_at" in present:
        bad_ts = con.execute(
            "select _source_line, sampled_at from _tt where sampled_at is not null and "
            "coalesce(try_strptime(sampled_at, '%Y/%m/%d %H:%M:%S.%g'), try_strptime(sampled_at, '%Y/%m/%d %H:%M:%S'),"
            " try_cast(sampled_at as timestamp)) is null"
        ).fetchall()
        rejects += [Reject(int(n), "invalid_timestamp", "timestamp not 'YYYY/MM/DD HH:MM:SS.mmm'", "timestamp", v) for n, v in bad_ts]
        if bad_ts:
            bad_lines = pa.array([n for n, _ in bad_ts], type=pa.int64())
            table = table.filter(pa.compute.invert(pa.compute.is_in(table.column("_source_line"), value_set=bad_lines)))
        if table.num_rows:
            warnings.append(TZ_WARNING)
    mig = table.column("mig_enabled").to_pylist()
    n_mig = sum(1 for m in mig if m)
    if n_mig:
        warnings.append(
            f"{n_mig} row(s) with MIG enabled: utilization.gpu is not reported per GPU (NULL); "
            "per-slice utilisation comes from DCGM GR_ENGINE_ACTIVE"
        )
    warnings += unknown_model_warning(table.column("gpu_model").to_pylist())
    table, series_warnings = check_series(table)
    return ParseOutput(tables={"gpu_samples": table}, rejects=rejects, warnings=warnings + series_warnings)


def parse_compute_apps(path: Path) -> ParseOutput:
    """nvidia-smi --query-compute-apps CSV -> gpu_processes (header-only file: 0 rows)."""
    text, header, rejects = _read(path, PROCESS_FIELDS)
    con = duckdb.connect()
    con.register("_t", text)
    present = set(header)
    where = " where coalesce(sampled_at, '') <> 'timestamp'" if "sampled_at" in present else ""
    con.execute(f"create temp view _tt as select * from _t{where}")
    rejects += _non_numeric(con, ["used_memory_mib", "pid"], present, header)
    sql = f"select {_typed_sql(PROCESS_COLUMNS, present, extra=', ' + repr('nvidia_smi_compute_apps') + ' as source_format')} from _tt"
    table = _finish(con, sql, PROCESS_COLUMNS)
    warnings = [TZ_WARNING] if table.num_rows and "sampled_at" in present else []
    return ParseOutput(tables={"gpu_processes": table}, rejects=rejects, warnings=warnings)


FORMATS = [
    SourceFormat(
        name="nvidia_smi_query_gpu",
        family="usage",
        detect=detect_query_gpu,
        parse=parse_query_gpu,
        tables=("gpu_samples",),
        description="nvidia-smi --query-gpu=... --format=csv (units in header and values, [N/A] placeholders)",
        near_miss=near_miss,
    ),
    SourceFormat(
        name="nvidia_smi_compute_apps",
        family="usage",
        detect=detect_compute_apps,
        parse=parse_compute_apps,
        tables=("gpu_processes",),
        description="nvidia-smi --query-compute-apps=... --format=csv",
    ),
]
