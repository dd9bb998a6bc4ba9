"""Hardware named in a benchmark file -> instance, GPU model and GPU count, from the instance catalogue.

The catalogue (reference/instances.py, re-exported by the `reference` package) is the same
table dbt prices and bills with (seed instance_gpu_map), so a run on `g5.2xlarge` gets the GPU of
the g5.2xlarge price. What is read:
- `<name> x N` (vLLM's `gpu_type`, the nightly table's `GPU`): N instances of a catalogued name,
  which may carry network words around it (`ib-`, `no-ib-`, `-GPUDirect-RDMA-Infiniband`, a
  leading `1x`), kept as `network`;
- `8x H100`, `gpu_8x_h100_sxm5` (gpuhunt / SkyPilot / Lambda style): N GPUs of a named GPU,
  read by the shared GPU name rules; no instance;
- anything else names no catalogued instance: no GPU is guessed, the caller warns with the
  file and the name (a wrong GPU would silently mis-price every run on it).
"""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa

from reference import find_instance, gpu_model_from_name, gpu_model_of

#: Keys under which run metadata names the machine (LLMPerf `--metadata`, GenAI-Perf / guidellm
#: metadata blocks, hand-added keys): first present wins.
HARDWARE_KEYS = ("instance_type", "instance", "machine_type", "vm_size", "vm_sku", "shape", "node_type",
                 "gpu_type", "hardware")

_VM_COUNT_RE = re.compile(r"\bx\s*(\d+)\s*$", re.IGNORECASE)
_GLUED_COUNT_RE = re.compile(r"^\d+x(?=[A-Za-z])")
_GPU_COUNT_RE = re.compile(r"^(?:gpu[_-])?(\d+)\s*x[\s_-]*(\S.*)$", re.IGNORECASE)
# an uncatalogued instance after `Nx` (`2x Standard_ND96isr_v9_H100`) must not be read as N GPUs
_INSTANCE_LIKE_RE = re.compile(r"standard_|[a-z0-9]\.[a-z]|highgpu|megagpu|ultragpu", re.IGNORECASE)


def _network(rest: str) -> str | None:
    low = re.sub(r"^\d+x", "", rest).strip(" -").lower()
    if low.startswith(("no-ib", "no_ib")):
        return "ethernet"
    if "ib" in low.replace("-", " ").split() or "infiniband" in low or low.startswith("ib"):
        return "infiniband"
    return None


def hardware_from_text(text: str | None) -> dict[str, Any]:
    """vm_sku, vm_count, gpu_model, gpu_count (a float: partitions are fractional), network, and
    `unknown`: the name as written when it names neither a catalogued instance nor N x a known GPU."""
    out: dict[str, Any] = {"vm_sku": None, "vm_count": None, "gpu_model": None, "gpu_count": None,
                           "network": None, "unknown": None}
    body = (text or "").strip()
    if not body:
        return out
    m = _VM_COUNT_RE.search(body)
    if m:
        out["vm_count"] = int(m.group(1))
        body = body[: m.start()].strip()
    # the nightly table glues a count to the name (`1xStandard_ND96asr_v4`): it is no part of the name
    unglued = _GLUED_COUNT_RE.sub("", body, count=1)
    found = find_instance(unglued)
    if found:
        row, start, end = found
        body = unglued
        gpus = row.gpus
        out.update(vm_sku=row.sku, gpu_model=row.gpu_model, network=_network((body[:start] + " " + body[end:]).strip(" -")),
                   gpu_count=None if gpus is None else gpus * (out["vm_count"] or 1))
        return out
    g = _GPU_COUNT_RE.match(body)
    gpu = gpu_model_from_name(g.group(2)) if g and not _INSTANCE_LIKE_RE.search(g.group(2)) else None
    if g and gpu:
        out.update(gpu_model=gpu, gpu_count=float(int(g.group(1)) * (out["vm_count"] or 1)))
        return out
    out["unknown"] = body
    return out


def hardware_from_metadata(*blocks: Any) -> tuple[str | None, dict[str, Any]]:
    """(text, hardware) of the first HARDWARE_KEYS value found in the given dicts (top level first)."""
    for block in blocks:
        if not isinstance(block, dict):
            continue
        for key in HARDWARE_KEYS:
            value = block.get(key)
            if isinstance(value, str) and value.strip():
                return value, hardware_from_text(value)
    return None, hardware_from_text(None)


def whole_gpus(count: float | None) -> int | None:
    """GPU count for the BIGINT columns: None unless whole (a slice of a GPU is no GPU count)."""
    return int(count) if count is not None and float(count).is_integer() else None


def unknown_warning(file_name: str, field: str, hw: dict[str, Any]) -> list[str]:
    """The parse warning for a name the catalogue does not know (empty when it was resolved)."""
    if not hw.get("unknown"):
        return []
    return [(f"{file_name}: {field} {hw['unknown']!r} names no instance in the instance catalogue "
             "(reference/instances.py) and no 'N x GPU': no GPU assigned")]


def run_columns(text: str | None, hw: dict[str, Any]) -> dict[str, Any]:
    """The benchmark_runs hardware columns of a resolved name."""
    return {"hardware": text, "vm_sku": hw["vm_sku"], "vm_count": hw["vm_count"],
            "gpu_model": hw["gpu_model"], "gpu_count": whole_gpus(hw["gpu_count"])}


def resolve_gpu_model_column(table: pa.Table, file_name: str) -> tuple[pa.Table, list[str]]:
    """Our own CSVs: a `gpu_model` cell may name the machine (`p4d.24xlarge`, `BM.GPU.H100.8 x 2`,
    `8x H100`) instead of the GPU. Such a cell becomes the catalogue's GPU model and an empty
    `gpu_count` the machine's GPUs; a given count is kept (a job may hold part of a machine) and
    flagged when it exceeds the machine's. A cell naming neither a GPU nor a machine is flagged."""
    if "gpu_model" not in table.column_names or table.num_rows == 0:
        return table, []
    rows, warnings, changed = table.to_pylist(), [], False
    for row in rows:
        text = row["gpu_model"]
        if not text:
            continue
        hw = hardware_from_text(text)
        where = f"{file_name} line {row.get('_source_line')}"
        if hw["unknown"]:
            if gpu_model_of(text) is None:
                warnings.append(f"{where}: gpu_model {text!r} is neither a known GPU nor an instance in the "
                                "instance catalogue (reference/instances.py): no GPU assigned")
            continue
        changed = True
        row["gpu_model"] = hw["gpu_model"]
        if "gpu_count" not in row:
            continue
        machine = whole_gpus(hw["gpu_count"])
        if row["gpu_count"] is None:
            row["gpu_count"] = machine
        elif machine is not None and row["gpu_count"] > machine:
            warnings.append(f"{where}: gpu_count {row['gpu_count']} exceeds the {machine} GPUs of {text!r}")
    return (pa.Table.from_pylist(rows, schema=table.schema) if changed else table), warnings
