"""`scontrol show nodes` dumps -> raw.gpu_inventory (cluster GPU capacity per node).

Accepts the one-line-per-node form (`NodeName=a100gpu1 CfgTRES=cpu=64,...,gres/gpu=4,gres/gpu:a100=4`)
and the default multi-line blocks (`NodeName=...` then indented `Gres=gpu:a100:4(S:0-1)`,
`CfgTRES=...` lines). GPU count: untyped `gres/gpu` in CfgTRES, else the sum of typed keys,
else the `Gres=` field. Nodes without GPUs are kept with gpu_count 0 (they are capacity too).

MIG: Slurm counts each MIG device as one gpu, so gpu_count of a partitioned H100 is its slices'
count. The typed gres (CfgTRES typed keys, else the `Gres=` field) name the profiles
(`nvidia_h100_80gb_hbm3_3g.40gb`): mig_devices counts them and physical_gpu_count = whole-GPU gres
+ ceil(compute slices / 7), so the warehouse counts each physical GPU once. gres_detail keeps the
typed gres as `type=count`. An optional `ClusterName=` on the record fills cluster.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa

from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile, head_text
from sources.usage._shared import MIG_SLICES_PER_GPU, mig_profile, mig_slices, rows_to_table

FORMAT_NAME = "slurm_scontrol_nodes"
SCHEMA: dict[str, pa.DataType] = {
    "node": pa.string(), "gpu_type": pa.string(), "gpu_count": pa.float64(), "cpu_count": pa.float64(),
    "mem_mib": pa.float64(), "physical_gpu_count": pa.float64(), "gres_detail": pa.string(),
    "mig_devices": pa.float64(), "cluster": pa.string(), "source_format": pa.string(), "_source_line": pa.int64(),
}
_NODE = re.compile(r"(?:^|\s)NodeName=(\S+)")
_FIELD = re.compile(r"(?:^|\s)(CfgTRES|Gres|ClusterName)=(\S*)")
# One gpu entry of a Gres= field: `gpu:<type>:<count>` or `gpu:<count>`, optionally `(S:0-1)` after it.
_GRES_GPU = re.compile(r"(?:^|,)gpu(?::([^:,(]+))?:(\d+)")
_MEM_UNITS = {"K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1048576.0, "": 1.0}


def detect(path: Path, head: bytes) -> bool:
    """Text whose first non-blank line starts with NodeName= and that mentions CfgTRES or Gres."""
    text = head_text(head)
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    return first.lstrip().startswith("NodeName=") and ("CfgTRES=" in text or "Gres=" in text)


def _tres(tres: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in tres.split(",") if "=" in item)


def _by_type(pairs: Iterable[tuple[str, str]]) -> dict[str, float]:
    """Typed gres counts summed per type (a type may be listed once per socket group)."""
    out: dict[str, float] = {}
    for gpu_type, n in pairs:
        out[gpu_type] = out.get(gpu_type, 0.0) + float(n)
    return out


def _count_text(n: float) -> str:
    return str(int(n)) if n == int(n) else str(n)


def _fractions(count: float, typed: dict[str, float]) -> dict[str, Any]:
    """mig_devices, physical_gpu_count and gres_detail of a node from its GPU count and typed gres."""
    profiles = {t: p for t in typed if (p := mig_profile(t))}
    mig = sum(typed[t] for t in profiles)
    slices = sum(typed[t] * mig_slices(p) for t, p in profiles.items())
    whole = max(count - mig, 0.0)
    return {
        "mig_devices": mig,
        "physical_gpu_count": whole + math.ceil(slices / MIG_SLICES_PER_GPU),
        "gres_detail": ",".join(f"{t}={_count_text(n)}" for t, n in sorted(typed.items())) or None,
    }


def _node_row(name: str, line: int, fields: dict[str, str]) -> tuple[dict[str, Any] | None, Reject | None]:
    tres = _tres(fields.get("CfgTRES", ""))
    try:
        typed = _by_type((k.split(":", 1)[1], v) for k, v in tres.items() if k.startswith("gres/gpu:"))
        gres = _GRES_GPU.findall(fields.get("Gres", ""))
        if "gres/gpu" in tres:
            count = float(tres["gres/gpu"])
        elif typed:
            count = sum(typed.values())
        else:
            count = sum(float(n) for _, n in gres)
        if not typed:  # CfgTRES lists typed gres only when accounting tracks them: Gres= names them anyway
            typed = _by_type((t, n) for t, n in gres if t)
        mem = re.match(r"^([0-9.]+)([KMGT]?)$", tres.get("mem", ""))
        cluster = fields.get("ClusterName")
        row = {
            "node": name, "gpu_type": ",".join(sorted(typed)) or None, "gpu_count": count,
            "cpu_count": float(tres["cpu"]) if "cpu" in tres else None,
            "mem_mib": float(mem.group(1)) * _MEM_UNITS[mem.group(2)] if mem else None,
            **_fractions(count, typed),
            "cluster": cluster if cluster and cluster != "(null)" else None,
            "source_format": FORMAT_NAME, "_source_line": line,
        }
        return row, None
    except ValueError as exc:
        return None, Reject(line, "non_numeric", f"node {name}: {exc}", "CfgTRES", fields.get("CfgTRES"))


def parse(path: Path) -> ParseOutput:
    """Parse scontrol node records into gpu_inventory rows."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UnreadableFile(path, None, f"cannot read: {exc}") from exc
    nodes: list[tuple[str, int, dict[str, str]]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        m = _NODE.search(line)
        if m:
            nodes.append((m.group(1), lineno, {}))
        if nodes:
            for key, value in _FIELD.findall(line):
                nodes[-1][2][key] = value
    if not nodes:
        raise UnreadableFile(path, 1, "no NodeName= records")
    rows, rejects = [], []
    for name, line, fields in nodes:
        row, rej = _node_row(name, line, fields)
        if row:
            rows.append(row)
        if rej:
            rejects.append(rej)
    warnings = []
    seen: set[str] = set()
    dups = [r["node"] for r in rows if r["node"] in seen or seen.add(r["node"])]
    if dups:
        warnings.append(f"node(s) listed more than once: {', '.join(sorted(set(dups)))}")
    return ParseOutput(tables={"gpu_inventory": rows_to_table(rows, SCHEMA)}, rejects=rejects, warnings=warnings)


FORMATS = [
    SourceFormat(
        name=FORMAT_NAME, family="usage", detect=detect, parse=parse, tables=("gpu_inventory",),
        description="scontrol show nodes (CfgTRES / Gres) -> GPU inventory",
    )
]
