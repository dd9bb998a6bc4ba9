"""utkuozdemir/nvidia_gpu_exporter scrapes (`nvidia_smi_*{uuid=...}`) -> gpu_samples, gpu_processes.

The exporter converts units in metric names (bytes, Hz, ratio 0-1); we convert back to the
gpu_samples units (MiB, MHz, %). Its `uuid` label drops the `GPU-` prefix; we restore it so
the UUID joins with nvidia-smi and DCGM. Time handling as in `_prom.py` (no time: NULL).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sources.common import ParseOutput, SourceFormat, UnreadableFile, head_text
from sources.usage._prom import ReadStats, read_samples
from sources.usage._series import check_series
from sources.usage._shared import (
    PROCESS_COLUMNS,
    SAMPLE_COLUMNS,
    normalise_uuid,
    rows_to_table,
    unknown_model_warning,
)

FORMAT_NAME = "nvidia_gpu_exporter_prometheus"
MIB = 1024.0 * 1024.0

# metric -> (gpu_samples column, multiplier)
METRIC_COLUMNS: dict[str, tuple[str, float]] = {
    "nvidia_smi_utilization_gpu_ratio": ("gpu_util_pct", 100.0),
    "nvidia_smi_utilization_memory_ratio": ("mem_copy_util_pct", 100.0),
    "nvidia_smi_memory_used_bytes": ("fb_used_mib", 1 / MIB),
    "nvidia_smi_memory_total_bytes": ("fb_total_mib", 1 / MIB),
    "nvidia_smi_power_draw_watts": ("power_w", 1.0),
    "nvidia_smi_temperature_gpu": ("gpu_temp_c", 1.0),
    "nvidia_smi_temperature_memory": ("memory_temp_c", 1.0),
    "nvidia_smi_clocks_current_sm_clock_hz": ("sm_clock_mhz", 1e-6),
    "nvidia_smi_mig_mode_current": ("mig_enabled", 1.0),
}
_DETECT = re.compile(r"^(?:# (?:HELP|TYPE) )?nvidia_smi_\w+", re.MULTILINE)
_WANTED = re.compile(r"nvidia_smi_")


def detect(path: Path, head: bytes) -> bool:
    """Prometheus text with nvidia_smi_* metrics."""
    return bool(_DETECT.search(head_text(head)))


def parse(path: Path) -> ParseOutput:
    """Parse one or more nvidia_gpu_exporter scrapes."""
    stats = ReadStats()
    gpus: dict[tuple[Any, ...], dict[str, Any]] = {}
    procs: list[dict[str, Any]] = []
    n = 0
    for s in read_samples(path, stats, _WANTED):
        n += 1
        uuid = normalise_uuid(s.labels.get("uuid"))
        if uuid is None:
            continue  # exporter self-metrics (last_collect_success, failed_scrapes_total, ...)
        if s.name == "nvidia_smi_compute_app_used_memory_bytes":
            procs.append({
                "sampled_at": s.ts, "gpu_uuid": uuid, "pid": int(s.labels["pid"]) if s.labels.get("pid", "").isdigit() else None,
                "process_name": s.labels.get("process_name"), "used_memory_mib": s.value / MIB,
                "source_format": FORMAT_NAME, "_source_line": s.line,
            })
            continue
        key = (s.ts, uuid)
        row = gpus.setdefault(key, {"sampled_at": s.ts, "gpu_uuid": uuid, "source_format": FORMAT_NAME, "_source_line": s.line})
        if s.name == "nvidia_smi_gpu_info":
            row["gpu_model"] = s.labels.get("name")
            row["gpu_index"] = s.labels.get("index")
            continue
        mapped = METRIC_COLUMNS.get(s.name)
        if mapped and s.value == s.value:  # NaN means "not available"
            col, factor = mapped
            row[col] = bool(s.value) if col == "mig_enabled" else s.value * factor
    if n == 0:
        raise UnreadableFile(path, None, "no nvidia_smi_* samples found")
    for proc in procs:  # the GPU model is on gpu_info, not on the process series
        proc["gpu_model"] = gpus.get((proc["sampled_at"], proc["gpu_uuid"]), {}).get("gpu_model")
    warnings: list[str] = []
    if gpus and all(r["sampled_at"] is None for r in gpus.values()):
        warnings.append("scrape has no timestamps: sampled_at is NULL (the pipeline uses the landing time)")
    if stats.bad_lines:
        warnings.append(f"{len(stats.bad_lines)} unparseable line(s) skipped, first at line {stats.bad_lines[0]}")
    warnings += unknown_model_warning(r.get("gpu_model") for r in gpus.values())
    samples, series_warnings = check_series(rows_to_table(list(gpus.values()), SAMPLE_COLUMNS))
    tables = {"gpu_samples": samples, "gpu_processes": rows_to_table(procs, PROCESS_COLUMNS)}
    return ParseOutput(tables=tables, warnings=warnings + series_warnings)


FORMATS = [
    SourceFormat(
        name=FORMAT_NAME,
        family="usage",
        detect=detect,
        parse=parse,
        tables=("gpu_samples", "gpu_processes"),
        description="nvidia_gpu_exporter /metrics scrape (nvidia_smi_*{uuid=...})",
    )
]
