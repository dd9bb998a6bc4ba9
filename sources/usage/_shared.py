"""Helpers shared by the usage parsers: DCGM sentinels, GPU naming, arrow table building."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

import numpy as np
import pyarrow as pa

from sources.common import Reject

# DCGM "blank" values mean "field not supported / not found / no permission", never a reading.
# int64 family: DCGM_INT64_BLANK = 0x7ffffffffffffff0 and the next 15 codes (e.g. ...794 =
# NOT_SUPPORTED). As floats they all round to 2**63, so any value >= this bound is a sentinel.
INT64_BLANK_MIN = 9223372036854775792.0
# int32 family: DCGM_INT32_BLANK = 0x7ffffff0 .. 0x7fffffff. Only applied to gauges: a counter
# such as energy (mJ) can legitimately pass through these values.
INT32_BLANK_MIN = 2147483632.0
INT32_BLANK_MAX = 2147483647.0
# fp64 family: DCGM_FP64_BLANK = 140737488355328.0 (2**47) and up.
FP64_BLANK_MIN = 140737488355328.0

# Columns that are counters (sentinel test skips the int32/fp64 ranges for them).
COUNTER_COLUMNS = frozenset({"energy_mj"})

# Substrings of GPU model names we know (case-insensitive). A name matching none is kept as
# reported and produces a warning, so the catalog seed can be extended.
KNOWN_GPU_PATTERNS = (
    "a100", "a10g", "a10", "a30", "a40", "a16", "a2", "h100", "h200", "h800", "h20", "gh200",
    "b100", "b200", "gb200", "b300", "l40s", "l40", "l4", "t4", "v100", "p100", "p40", "p4",
    "k80", "m60", "rtx", "a6000", "a5000", "a4000", "mi300", "mi250", "mi210", "mi100", "gaudi",
)
_KNOWN_RE = re.compile(
    r"(?<![a-z0-9])(" + "|".join(sorted(KNOWN_GPU_PATTERNS, key=len, reverse=True)) + ")", re.IGNORECASE
)

# A MIG profile at the end of a device type name (Slurm's gres type `nvidia_h100_80gb_hbm3_3g.40gb`, a
# node's `nvidia.com/gpu.product` `NVIDIA-A100-SXM4-40GB-MIG-1g.5gb`): `<compute slices>g.<memory>gb`, plus
# `+me` when the slice holds the media engines. Written for both Python's re and DuckDB's RE2.
MIG_PROFILE_PATTERN = r"(?i)(\d+g\.\d+gb(?:\+me)?)$"
_MIG_PROFILE_RE = re.compile(MIG_PROFILE_PATTERN)
# Compute slices of one physical GPU under MIG (A100, H100, H200, B200; the A30 has 4, but it is not
# in the GPU catalog, so 7 serves every GPU we can price).
MIG_SLICES_PER_GPU = 7

# Column order of raw.gpu_samples (contract order) with their arrow types.
SAMPLE_COLUMNS: dict[str, pa.DataType] = {
    "sampled_at": pa.timestamp("us"),
    "host": pa.string(),
    "gpu_index": pa.string(),
    "gpu_uuid": pa.string(),
    "gpu_model": pa.string(),
    "mig_enabled": pa.bool_(),
    "mig_profile": pa.string(),
    "mig_instance_id": pa.string(),
    "gpu_util_pct": pa.float64(),
    "gr_engine_active": pa.float64(),
    "sm_active": pa.float64(),
    "dram_active": pa.float64(),
    "tensor_active": pa.float64(),
    "mem_copy_util_pct": pa.float64(),
    "fb_used_mib": pa.float64(),
    "fb_total_mib": pa.float64(),
    "power_w": pa.float64(),
    "energy_mj": pa.float64(),
    "gpu_temp_c": pa.float64(),
    "memory_temp_c": pa.float64(),
    "sm_clock_mhz": pa.float64(),
    "namespace": pa.string(),
    "pod": pa.string(),
    "container": pa.string(),
    "job_id": pa.string(),
    "source_format": pa.string(),
    "_source_line": pa.int64(),
}
MEASURE_COLUMNS = [c for c, t in SAMPLE_COLUMNS.items() if t == pa.float64()]

PROCESS_COLUMNS: dict[str, pa.DataType] = {
    "sampled_at": pa.timestamp("us"),
    "host": pa.string(),
    "gpu_uuid": pa.string(),
    "gpu_model": pa.string(),
    "gpu_bus_id": pa.string(),
    "pid": pa.int64(),
    "process_name": pa.string(),
    "used_memory_mib": pa.float64(),
    "source_format": pa.string(),
    "_source_line": pa.int64(),
}


def is_sentinel(value: float, column: str) -> bool:
    """True when `value` is a DCGM blank code rather than a measurement."""
    if value >= INT64_BLANK_MIN:
        return True
    if column in COUNTER_COLUMNS:
        return False
    return value >= FP64_BLANK_MIN or INT32_BLANK_MIN <= value <= INT32_BLANK_MAX


def sentinel_sql(expr: str, column: str) -> str:
    """SQL CASE that maps DCGM blank codes in `expr` (a DOUBLE) to NULL, mirroring is_sentinel."""
    cond = f"{expr} >= {INT64_BLANK_MIN!r}"
    if column not in COUNTER_COLUMNS:
        cond += (
            f" or {expr} >= {FP64_BLANK_MIN!r}"
            f" or ({expr} >= {INT32_BLANK_MIN!r} and {expr} <= {INT32_BLANK_MAX!r})"
        )
    return f"case when {cond} then null else {expr} end"


def normalise_uuid(uuid: str | None) -> str | None:
    """GPU UUIDs in 'GPU-xxxxxxxx-...' form (nvidia_gpu_exporter drops the prefix)."""
    if uuid is None or uuid == "":
        return None
    if uuid.upper().startswith(("GPU-", "MIG-")):
        return uuid
    return "GPU-" + uuid


def mig_profile(type_name: str | None) -> str | None:
    """The MIG profile a device type name ends with, lower case (`3g.40gb`, `1g.10gb+me`); None for a
    whole GPU."""
    match = _MIG_PROFILE_RE.search(type_name or "")
    return match.group(1).lower() if match else None


def mig_slices(profile: str) -> int:
    """Compute slices a MIG profile holds: the number before `g.` (`3g.40gb` -> 3)."""
    return int(profile.split("g.", 1)[0])


def unknown_gpu_models(models: Iterable[str | None]) -> list[str]:
    """Reported model names that match no known GPU family (kept, but worth a warning)."""
    return sorted({m for m in models if m and not _KNOWN_RE.search(m)})


def unknown_model_warning(models: Iterable[str | None]) -> list[str]:
    """Warnings for unknown GPU model names (empty when all are known)."""
    unknown = unknown_gpu_models(models)
    return [f"unknown GPU model name(s), kept as reported: {', '.join(unknown)}"] if unknown else []


def sentinel_warning(counts: Counter[str]) -> list[str]:
    """One warning summarising the DCGM sentinel values set to NULL, per column."""
    if not counts:
        return []
    detail = ", ".join(f"{col}={n}" for col, n in sorted(counts.items()))
    return [f"{sum(counts.values())} DCGM blank/sentinel value(s) (field not supported) set to NULL: {detail}"]


def rows_to_table(rows: list[dict[str, Any]], schema: dict[str, pa.DataType]) -> pa.Table:
    """Build an arrow table with every schema column (missing keys become NULL)."""
    arrays = [pa.array([r.get(c) for r in rows], type=t) for c, t in schema.items()]
    return pa.Table.from_arrays(arrays, names=list(schema))


def line_numbers(n_rows: int, rejects: list[Reject]) -> np.ndarray:
    """File line of each kept row: index + 2, plus the rejected lines that precede it."""
    lines = np.arange(2, n_rows + 2, dtype=np.int64)
    bad = sorted({r.line for r in rejects if r.line is not None})
    if bad:
        # The i-th rejected line L_i (0-based i) precedes every kept row whose provisional
        # line (without shifts) is >= L_i - i.
        thresholds = np.array([line - i for i, line in enumerate(bad)], dtype=np.int64)
        lines += np.searchsorted(thresholds, lines, side="right")
    return lines
