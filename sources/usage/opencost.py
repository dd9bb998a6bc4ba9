"""OpenCost allocation API responses (`/allocation`, `/allocation/compute`) -> raw.gpu_jobs.

`data` is a list of maps keyed by the aggregate value (namespace, pod, ...); each map value is
an Allocation. One row per Allocation, scheduler 'kubernetes', job_id = the aggregate key.
gpu_count = gpuRequestAverage when present, else gpuCount; gpu_util_pct = 100 *
gpuUsageAverage / gpuRequestAverage when both are present (newer OpenCost), else NULL.
Small JSON documents: walked in Python.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile, head_text
from sources.usage._shared import rows_to_table

FORMAT_NAME = "opencost_allocation"
SCHEMA: dict[str, pa.DataType] = {
    "scheduler": pa.string(), "cluster": pa.string(), "job_id": pa.string(), "namespace": pa.string(),
    "pod": pa.string(), "labels": pa.string(), "started_at": pa.timestamp("us"), "ended_at": pa.timestamp("us"),
    "elapsed_s": pa.float64(), "gpu_count": pa.float64(), "gpu_hours": pa.float64(), "gpu_util_pct": pa.float64(),
    "node_list": pa.string(), "source_format": pa.string(), "_source_line": pa.int64(),
}
# Keys that are not workloads but OpenCost's own buckets.
SPECIAL_KEYS = {"__idle__", "__unallocated__", "__unmounted__"}


def detect(path: Path, head: bytes) -> bool:
    """JSON with a `data` key and Allocation fields."""
    text = head_text(head).lstrip()
    return text.startswith("{") and '"data"' in text and '"properties"' in text and (
        '"cpuCoreHours"' in text or '"gpuHours"' in text or '"totalCost"' in text
    )


def _ts(value: Any) -> datetime | None:
    if not value:
        return None
    dt = datetime.fromisoformat(str(value))
    return dt.astimezone(UTC).replace(tzinfo=None) if dt.tzinfo else dt


def _num(alloc: dict[str, Any], key: str) -> float | None:
    v = alloc.get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def parse(path: Path) -> ParseOutput:
    """Parse an allocation response into gpu_jobs rows."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        raise UnreadableFile(path, line, f"not valid JSON: {exc}") from exc
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, list):
        raise UnreadableFile(path, None, "no 'data' list (OpenCost allocation response)")
    rows: list[dict[str, Any]] = []
    rejects: list[Reject] = []
    specials: list[str] = []
    index = 0
    for bucket in data:
        for key, alloc in (bucket or {}).items():
            index += 1
            if not isinstance(alloc, dict):
                rejects.append(Reject(index, "not_an_object", f"allocation {key!r} is not an object", key, None))
                continue
            props = alloc.get("properties") or {}
            try:
                start, end = _ts(alloc.get("start")), _ts(alloc.get("end"))
            except ValueError:
                rejects.append(Reject(index, "invalid_timestamp", f"allocation {key!r}: bad start/end", "start", str(alloc.get("start"))))
                continue
            if start and end and end < start:
                rejects.append(Reject(index, "period_reversed", f"allocation {key!r} ends before it starts", "end", str(alloc.get("end"))))
                continue
            if key in SPECIAL_KEYS:
                specials.append(key)
            request, usage = _num(alloc, "gpuRequestAverage"), _num(alloc, "gpuUsageAverage")
            minutes = _num(alloc, "minutes")
            labels = {**(props.get("namespaceLabels") or {}), **(props.get("labels") or {})}
            rows.append({
                "scheduler": "kubernetes", "cluster": props.get("cluster"), "job_id": alloc.get("name") or key,
                "namespace": props.get("namespace"), "pod": props.get("pod"),
                "labels": json.dumps(labels, sort_keys=True) if labels else None,
                "started_at": start, "ended_at": end,
                "elapsed_s": minutes * 60 if minutes is not None else None,
                "gpu_count": request if request is not None else _num(alloc, "gpuCount"),
                "gpu_hours": _num(alloc, "gpuHours"),
                "gpu_util_pct": 100.0 * usage / request if usage is not None and request else None,
                "node_list": props.get("node"), "source_format": FORMAT_NAME, "_source_line": index,
            })
    warnings = []
    if specials:
        warnings.append(f"OpenCost special bucket(s) kept as rows (not workloads): {', '.join(sorted(set(specials)))}")
    if rows and all(not r["gpu_hours"] for r in rows):
        warnings.append("no allocation has GPU hours (gpuHours all 0 or missing)")
    return ParseOutput(tables={"gpu_jobs": rows_to_table(rows, SCHEMA)}, rejects=rejects, warnings=warnings)


FORMATS = [
    SourceFormat(
        name=FORMAT_NAME, family="usage", detect=detect, parse=parse, tables=("gpu_jobs",),
        description="OpenCost /allocation(/compute) JSON response (data: [ {aggregate: Allocation} ])",
    )
]
