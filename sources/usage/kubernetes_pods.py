"""`kubectl get pods -A -o json` -> raw.gpu_jobs: one row per pod that asks for a GPU resource.

Accepts kubectl's `{"kind": "List", "items": [...]}`, the API server's `PodList` and a single `Pod`.
GPU resources are read per container from `resources.limits`, a name missing there from
`resources.requests`, and summed over `spec.containers` (init containers run before them and are
not counted):

- `nvidia.com/gpu` (HAMi may name it `nvidia.com/vgpu`): devices -> gpu_count;
- `nvidia.com/mig-<profile>` (mixed MIG strategy): devices -> gpu_count, mig_profile = profile (the
  device plugin writes a profile's `+me` as `.me`; normalised back). Under the single strategy MIG
  devices are plain `nvidia.com/gpu`: a `nvidia.com/gpu.product` ending `-MIG-<profile>` gives it;
- HAMi `nvidia.com/gpucores` / `nvidia.com/gpumem-percentage` (percent of one card per device) ->
  gpu_share / gpu_memory_share = value / 100, device-weighted over containers. A container stating
  a share without a device count gets HAMi's default of one device (its webhook adds it).

gpu_hours = gpu_count x elapsed hours (devices, not shares). A pod whose GPU resource value is
not a number is a reject naming the pod; pods without GPU resources are skipped (counted in a
warning). Any other resource naming a GPU (`nvidia.com/gpu.shared`: the device plugin's time-sliced
replicas, whose share of a GPU the pod does not say; `amd.com/gpu`; `gpu.intel.com/i915`) is not priced:
a pod asking only for such resources is an `unsupported_gpu_resource` reject naming them, never skipped
as a pod without GPUs; a pod asking for them beside priced devices loads those, with a warning.
Small JSON documents: walked in Python.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile, head_text
from sources.usage._shared import mig_profile, rows_to_table

FORMAT_NAME = "kubernetes_pods"
SCHEMA: dict[str, pa.DataType] = {
    "scheduler": pa.string(), "cluster": pa.string(), "job_id": pa.string(), "namespace": pa.string(),
    "pod": pa.string(), "labels": pa.string(), "state": pa.string(), "state_raw": pa.string(),
    "submitted_at": pa.timestamp("us"), "started_at": pa.timestamp("us"), "ended_at": pa.timestamp("us"),
    "elapsed_s": pa.float64(), "gpu_count": pa.float64(), "gpu_type": pa.string(), "mig_profile": pa.string(),
    "gpu_share": pa.float64(), "gpu_memory_share": pa.float64(), "gpu_hours": pa.float64(),
    "node_list": pa.string(), "n_nodes": pa.int64(), "source_format": pa.string(), "_source_line": pa.int64(),
}
DEVICE_RESOURCES = ("nvidia.com/gpu", "nvidia.com/vgpu")
# The NVIDIA device plugin's time-sliced replicas under renameByDefault: devices like nvidia.com/gpu, each
# 1 / replicas of a GPU where policy gpu_time_slicing names the pod's cluster or node (dbt), else whole.
SHARED = "nvidia.com/gpu.shared"
MIG_PREFIX = "nvidia.com/mig-"
CORES = "nvidia.com/gpucores"
MEMORY_PERCENT = "nvidia.com/gpumem-percentage"
# HAMi's memory per device in MiB: asks for a (shared) GPU, but states no share of the card.
MEMORY_MIB = "nvidia.com/gpumem"
HAMI_DEFAULT_DEVICES = 1.0
PRODUCT = "nvidia.com/gpu.product"
_READ = {*DEVICE_RESOURCES, SHARED, CORES, MEMORY_PERCENT, MEMORY_MIB, PRODUCT}
PHASES = {"Succeeded": "COMPLETED", "Failed": "FAILED", "Running": "RUNNING", "Pending": "PENDING"}
_DETECT = re.compile(r'"kind"\s*:\s*"Pod(?:List)?"')
_EMPTY_LIST = re.compile(r'"items"\s*:\s*\[\s*\]')
_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")
# `1g.10gb.me` / `1g.10gb-me` (resource names and node labels cannot hold `+`) -> `1g.10gb+me`.
_PLUS_SUFFIX = re.compile(r"(?i)(\d+g\.\d+gb)[.-](me)$")


def detect(path: Path, head: bytes) -> bool:
    """A JSON object naming kind Pod or PodList (kubectl's List puts its own kind last, after the
    items, whose kind is Pod), or an empty kubectl List."""
    text = head_text(head).lstrip()
    if not text.startswith("{") or '"apiVersion"' not in text:
        return False
    return bool(_DETECT.search(text)) or (bool(_EMPTY_LIST.search(text)) and '"List"' in text)


class BadValue(ValueError):
    """A GPU resource whose value is not a non-negative number (or a share above 100 %)."""

    def __init__(self, resource: str, value: Any, why: str) -> None:
        self.resource, self.value = resource, value
        super().__init__(f"{resource} = {value!r} {why}")


def _quantity(resource: str, value: Any, most: float | None = None) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str) and _NUMBER.match(value.strip()):
        number = float(value.strip())
    else:
        raise BadValue(resource, value, "is not a number")
    if not math.isfinite(number) or number < 0 or (most is not None and number > most):
        raise BadValue(resource, value, f"is outside 0..{most if most is not None else 'inf'}")
    return number


def normalise_profile(text: str) -> str | None:
    """A MIG profile from a resource suffix or product name (`1g.10gb.me` -> `1g.10gb+me`), else None."""
    return mig_profile(_PLUS_SUFFIX.sub(r"\1+\2", text.strip()))


@dataclass
class PodGpus:
    """The GPU resources of one pod, summed over its containers."""

    devices: float = 0.0
    whole: float = 0.0  # devices that are neither MIG slices nor HAMi defaults
    shared: float = 0.0  # of those, time-sliced replicas (nvidia.com/gpu.shared)
    unsupported: dict[str, str] = field(default_factory=dict)  # other resources naming a GPU, as asked
    mig: dict[str, float] = field(default_factory=dict)
    cores: list[tuple[float, float | None]] = field(default_factory=list)  # (devices, share) per container
    memory: list[tuple[float, float | None]] = field(default_factory=list)

    def add(self, resources: dict[str, Any]) -> None:
        """Add one container's resources (raises BadValue)."""
        shared = _quantity(SHARED, resources[SHARED]) if SHARED in resources else 0.0
        devices = sum(_quantity(r, resources[r]) for r in DEVICE_RESOURCES if r in resources) + shared
        self.whole += devices
        self.shared += shared
        for name, value in resources.items():
            if "gpu" in name.lower() and name not in _READ and not name.lower().startswith(MIG_PREFIX) \
                    and str(value).strip() not in ("0", "0.0", ""):
                # listed as asked (any Kubernetes quantity): it is reported, not priced
                self.unsupported[name] = ", ".join(filter(None, (self.unsupported.get(name), str(value).strip())))
            if name.lower().startswith(MIG_PREFIX):
                n = _quantity(name, value)
                profile = normalise_profile(name[len(MIG_PREFIX):]) or name[len(MIG_PREFIX):].lower()
                self.mig[profile] = self.mig.get(profile, 0.0) + n
                devices += n
        cores = _quantity(CORES, resources[CORES], 100) / 100 if CORES in resources else None
        memory = _quantity(MEMORY_PERCENT, resources[MEMORY_PERCENT], 100) / 100 if MEMORY_PERCENT in resources else None
        if MEMORY_MIB in resources:
            _quantity(MEMORY_MIB, resources[MEMORY_MIB])
        if not devices and (cores is not None or memory is not None or MEMORY_MIB in resources):
            devices = HAMI_DEFAULT_DEVICES
        if devices:
            self.devices += devices
            self.cores.append((devices, cores))
            self.memory.append((devices, memory))


def _share(parts: list[tuple[float, float | None]]) -> tuple[float | None, bool]:
    """Device-weighted share over the containers, and whether only some of them stated one (those
    that did not are counted as whole devices). None when no container states it."""
    stated = [s for _, s in parts if s is not None]
    if not stated:
        return None, False
    total = sum(d for d, _ in parts)
    return sum(d * (1.0 if s is None else s) for d, s in parts) / total, len(stated) < len(parts)


def _ts(value: Any) -> datetime | None:
    if not value:
        return None
    dt = datetime.fromisoformat(str(value))
    return dt.astimezone(UTC).replace(tzinfo=None) if dt.tzinfo else dt


def _ended_at(status: dict[str, Any]) -> datetime | None:
    """The latest container finish, once every container has terminated."""
    statuses = status.get("containerStatuses") or []
    finished = [((s.get("state") or {}).get("terminated") or {}).get("finishedAt") for s in statuses]
    if not finished or not all(finished):
        return None
    return max(_ts(f) for f in finished)


def _pod_row(pod: dict[str, Any], index: int, notes: dict[str, list[str]]) -> dict[str, Any] | Reject | None:
    """The gpu_jobs row of one pod, a Reject, or None for a pod without GPU resources."""
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    name, namespace = meta.get("name"), meta.get("namespace")
    who = f"{namespace}/{name}" if namespace else str(name)
    gpus = PodGpus()
    try:
        for container in spec.get("containers") or []:
            res = container.get("resources") or {}
            gpus.add({**(res.get("requests") or {}), **(res.get("limits") or {})})
    except BadValue as exc:
        return Reject(index, "non_numeric", f"pod {who}: {exc}", exc.resource, str(exc.value)[:200])
    except (AttributeError, TypeError) as exc:  # a container or resource map that is not an object
        return Reject(index, "malformed_pod", f"pod {who}: spec.containers is not a list of objects ({exc})",
                      "spec.containers", None)
    asked = ", ".join(f"{k}: {v}" for k, v in sorted(gpus.unsupported.items()))
    if not gpus.devices:
        if asked:
            return Reject(index, "unsupported_gpu_resource", f"pod {who} asks for {asked}: a GPU resource the ledger "
                          "does not price", min(gpus.unsupported), asked[:200])
        return None
    if asked:
        notes["unsupported"].append(f"{who} ({asked})")
    if gpus.shared:
        notes["time_sliced"].append(who)
    if not name:
        return Reject(index, "missing_value", f"item {index} asks for GPUs but has no metadata.name", "metadata.name", None)
    try:
        submitted, started = _ts(meta.get("creationTimestamp")), _ts(status.get("startTime"))
        ended = _ended_at(status)
    except (ValueError, TypeError) as exc:
        return Reject(index, "invalid_timestamp", f"pod {who}: a time is not a timestamp ({exc})", "status", None)
    if started and ended and ended < started:
        return Reject(index, "period_reversed", f"pod {who} ends before it starts", "finishedAt", str(ended))
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    gpu_type = annotations.get(PRODUCT) or labels.get(PRODUCT) or None
    profile = normalise_profile(gpu_type) if gpu_type else None
    if gpus.mig:
        profile = min(gpus.mig, key=lambda p: (-gpus.mig[p], p))
        if len(gpus.mig) > 1 or gpus.whole:
            notes["mixed_mig"].append(who)
    gpu_share, partial_cores = _share(gpus.cores)
    memory_share, partial_memory = _share(gpus.memory)
    if partial_cores or partial_memory:
        notes["partial_share"].append(who)
    phase = status.get("phase")
    if phase and phase not in PHASES:
        notes["phases"].append(str(phase))
    elapsed = (ended - started).total_seconds() if started and ended else None
    return {
        "scheduler": "kubernetes", "cluster": annotations.get("cluster") or labels.get("cluster") or None,
        "job_id": who, "namespace": namespace, "pod": name,
        "labels": json.dumps(labels, sort_keys=True) if labels else None,
        "state": PHASES.get(phase), "state_raw": phase,
        "submitted_at": submitted, "started_at": started, "ended_at": ended, "elapsed_s": elapsed,
        "gpu_count": gpus.devices, "gpu_type": gpu_type, "mig_profile": profile,
        "gpu_share": gpu_share, "gpu_memory_share": memory_share,
        "gpu_hours": gpus.devices * elapsed / 3600 if elapsed is not None else None,
        "node_list": spec.get("nodeName"), "n_nodes": 1, "source_format": FORMAT_NAME, "_source_line": index,
    }


def _items(doc: Any, path: Path) -> list[Any]:
    if isinstance(doc, dict) and doc.get("kind") == "Pod":
        return [doc]
    if isinstance(doc, dict) and isinstance(doc.get("items"), list) and doc.get("kind") in ("PodList", "List"):
        return doc["items"]
    raise UnreadableFile(path, None, "not a Kubernetes Pod, PodList or List of pods")


def parse(path: Path) -> ParseOutput:
    """Parse a pod list into gpu_jobs rows (one per pod with GPU resources)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UnreadableFile(path, getattr(exc, "lineno", None), f"not valid JSON: {exc}") from exc
    rows: list[dict[str, Any]] = []
    rejects: list[Reject] = []
    notes: dict[str, list[str]] = {"mixed_mig": [], "partial_share": [], "phases": [], "unsupported": [],
                                   "time_sliced": []}
    skipped = other_kinds = 0
    for index, item in enumerate(_items(doc, path), start=1):
        if not isinstance(item, dict):
            rejects.append(Reject(index, "not_an_object", f"item {index} is not an object", None, None))
            continue
        if item.get("kind") not in (None, "Pod"):
            other_kinds += 1
            continue
        out = _pod_row(item, index, notes)
        if out is None:
            skipped += 1
        elif isinstance(out, Reject):
            rejects.append(out)
        else:
            rows.append(out)
    warnings = []
    if skipped:
        warnings.append(f"{skipped} pod(s) without GPU resources skipped")
    if other_kinds:
        warnings.append(f"{other_kinds} item(s) that are not pods ignored")
    if notes["mixed_mig"]:
        warnings.append(f"pod(s) holding more than one MIG profile (or MIG and whole GPUs); mig_profile is the "
                        f"profile with most devices: "
                        f"{', '.join(notes['mixed_mig'][:10])}")
    if notes["partial_share"]:
        warnings.append(f"pod(s) where only some GPU containers state a HAMi share (the others counted as whole "
                        f"devices): {', '.join(notes['partial_share'][:10])}")
    if notes["unsupported"]:
        warnings.append(f"pod(s) also asking for GPU resources the ledger does not price (their priced devices "
                        f"loaded): {', '.join(notes['unsupported'][:10])}")
    if notes["time_sliced"]:
        warnings.append(f"{len(notes['time_sliced'])} pod(s) ask for {SHARED} (time-sliced replicas): each replica is "
                        "1 / replicas of a GPU where policy gpu_time_slicing names the pod's cluster or node, else "
                        f"a whole GPU: {', '.join(notes['time_sliced'][:10])}")
    if notes["phases"]:
        warnings.append(f"unknown pod phase(s), state left NULL: {', '.join(sorted(set(notes['phases'])))}")
    seen: set[str] = set()
    dups = sorted({r["job_id"] for r in rows if r["job_id"] in seen or seen.add(r["job_id"])})
    if dups:
        warnings.append(f"pod(s) listed more than once: {', '.join(dups[:10])}")
    return ParseOutput(tables={"gpu_jobs": rows_to_table(rows, SCHEMA)}, rejects=rejects, warnings=warnings)


FORMATS = [
    SourceFormat(
        name=FORMAT_NAME, family="usage", detect=detect, parse=parse, tables=("gpu_jobs",),
        description="kubectl get pods -o json (List / PodList / Pod) -> one gpu_jobs row per pod with GPU resources",
    )
]
