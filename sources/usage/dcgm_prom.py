"""DCGM exporter scrapes (Prometheus text) -> raw.gpu_samples.

One row per (time, host, GPU UUID / index, MIG instance, pod): the DCGM metrics we use are
pivoted to columns (see METRIC_COLUMNS). Files may hold one scrape (no time: sampled_at NULL,
the pipeline supplies the landing time), samples with trailing millisecond timestamps, or a
series of scrapes separated by `# scrape_time <ISO 8601>` lines (see sources/usage/_prom.py).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from sources.common import ParseOutput, SourceFormat, UnreadableFile, head_text
from sources.usage._prom import ReadStats, read_samples
from sources.usage._series import check_series
from sources.usage._shared import (
    SAMPLE_COLUMNS,
    is_sentinel,
    normalise_uuid,
    rows_to_table,
    sentinel_warning,
    unknown_model_warning,
)

FORMAT_NAME = "dcgm_prometheus"

# DCGM field -> (gpu_samples column, multiplier).
METRIC_COLUMNS: dict[str, tuple[str, float]] = {
    "DCGM_FI_DEV_GPU_UTIL": ("gpu_util_pct", 1.0),
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE": ("gr_engine_active", 1.0),
    "DCGM_FI_PROF_SM_ACTIVE": ("sm_active", 1.0),
    "DCGM_FI_PROF_DRAM_ACTIVE": ("dram_active", 1.0),
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": ("tensor_active", 1.0),
    "DCGM_FI_DEV_MEM_COPY_UTIL": ("mem_copy_util_pct", 1.0),
    "DCGM_FI_DEV_FB_USED": ("fb_used_mib", 1.0),
    "DCGM_FI_DEV_FB_TOTAL": ("fb_total_mib", 1.0),
    "DCGM_FI_DEV_FB_FREE": ("_fb_free_mib", 1.0),
    "DCGM_FI_DEV_POWER_USAGE": ("power_w", 1.0),
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": ("energy_mj", 1.0),
    "DCGM_FI_DEV_GPU_TEMP": ("gpu_temp_c", 1.0),
    "DCGM_FI_DEV_MEMORY_TEMP": ("memory_temp_c", 1.0),
    "DCGM_FI_DEV_SM_CLOCK": ("sm_clock_mhz", 1.0),
}

# Label -> column for the series identity and attribution (first matching label wins).
LABEL_COLUMNS: dict[str, tuple[str, ...]] = {
    "host": ("Hostname", "hostname", "node"),
    "gpu_index": ("gpu",),
    "gpu_uuid": ("UUID", "uuid"),
    "gpu_model": ("modelName",),
    "mig_profile": ("GPU_I_PROFILE",),
    "mig_instance_id": ("GPU_I_ID",),
    "namespace": ("namespace", "exported_namespace"),
    "pod": ("pod", "exported_pod"),
    "container": ("container", "exported_container"),
    "job_id": ("hpc_job", "job_id"),
}
_KEY_COLUMNS = ("host", "gpu_index", "gpu_uuid", "mig_instance_id", "pod", "namespace", "container")
_DCGM = re.compile(r"DCGM_FI_")
# A sample line needs a numeric value: the DCGM metric catalog CSV ("DCGM_FI_DEV_DEC_UTIL ,  gauge")
# must not match.
_DETECT = re.compile(
    r"^(?:# (?:HELP|TYPE) DCGM_FI_\w+|DCGM_FI_\w+(?:\{[^\n]*\})?[ \t]+[-+]?(?:[0-9.]+(?:[eE][-+]?\d+)?|Inf|NaN)(?:[ \t]+-?\d+)?[ \t]*$)",
    re.MULTILINE,
)


def detect(path: Path, head: bytes) -> bool:
    """A Prometheus exposition containing DCGM_FI_* samples (not the DCGM metric catalog CSV)."""
    return bool(_DETECT.search(head_text(head)))


def _label(labels: dict[str, str], names: tuple[str, ...]) -> str | None:
    for name in names:
        value = labels.get(name)
        if value:  # empty label values ("") mean "not attributed"
            return value
    return None


def parse(path: Path) -> ParseOutput:
    """Parse a DCGM exporter scrape or scrape series into gpu_samples."""
    stats = ReadStats()
    rows: dict[tuple[Any, ...], dict[str, Any]] = {}
    seen: set[tuple[Any, ...]] = set()
    sentinels: Counter[str] = Counter()
    unlabeled: Counter[str] = Counter()
    duplicates = 0
    n_samples = 0
    for s in read_samples(path, stats, _DCGM):
        n_samples += 1
        if not s.labels:
            unlabeled[s.name] += 1  # exporter placeholders (e.g. fixture dummies): no GPU to attach to
            continue
        ident = {col: _label(s.labels, names) for col, names in LABEL_COLUMNS.items()}
        ident["gpu_uuid"] = normalise_uuid(ident["gpu_uuid"])
        key = (s.ts, *(ident[c] for c in _KEY_COLUMNS))
        row = rows.get(key)
        if row is None:
            row = {**ident, "sampled_at": s.ts, "source_format": FORMAT_NAME, "_source_line": s.line}
            rows[key] = row
        else:
            for col, val in ident.items():
                if row.get(col) is None and val is not None:
                    row[col] = val
        mapped = METRIC_COLUMNS.get(s.name)
        if mapped is None:
            continue
        column, factor = mapped
        if (key, column) in seen:
            duplicates += 1  # the same scrape concatenated twice: keep the first value
            continue
        seen.add((key, column))
        if s.value != s.value or s.value in (float("inf"), float("-inf")):
            continue  # NaN/Inf readings carry no value
        if is_sentinel(s.value, column):
            sentinels[column] += 1
            continue
        row[column] = s.value * factor

    if n_samples == 0:
        raise UnreadableFile(path, stats.bad_lines[0] if stats.bad_lines else None, "no DCGM_FI_* samples found")
    for row in rows.values():
        free = row.pop("_fb_free_mib", None)
        if row.get("fb_total_mib") is None and row.get("fb_used_mib") is not None and free is not None:
            row["fb_total_mib"] = row["fb_used_mib"] + free  # FB_TOTAL not exported: used + free

    warnings: list[str] = []
    if unlabeled:
        warnings.append(
            f"{sum(unlabeled.values())} DCGM sample(s) without labels ignored (no GPU to attach them to): "
            + ", ".join(sorted(unlabeled))
        )
    if stats.bad_lines:
        warnings.append(f"{len(stats.bad_lines)} unparseable line(s) skipped, first at line {stats.bad_lines[0]}")
    if stats.bad_scrape_times:
        warnings.append(f"invalid '# scrape_time' value(s) at line(s) {stats.bad_scrape_times[:5]}")
    if duplicates:
        warnings.append(f"{duplicates} duplicated sample(s) (same metric, GPU and time) ignored; first value kept")
    if rows and all(r["sampled_at"] is None for r in rows.values()):
        warnings.append("scrape has no timestamps: sampled_at is NULL (the pipeline uses the landing time)")
    warnings += sentinel_warning(sentinels)
    warnings += unknown_model_warning(r.get("gpu_model") for r in rows.values())
    table = rows_to_table(sorted(rows.values(), key=lambda r: r["_source_line"]), SAMPLE_COLUMNS)
    table, series_warnings = check_series(table)
    return ParseOutput(tables={"gpu_samples": table}, warnings=warnings + series_warnings)


FORMATS = [
    SourceFormat(
        name=FORMAT_NAME,
        family="usage",
        detect=detect,
        parse=parse,
        tables=("gpu_samples",),
        description="DCGM exporter /metrics scrape(s), Prometheus text; optional ms timestamps or '# scrape_time' separators",
    )
]
