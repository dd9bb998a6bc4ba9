"""`scontrol show nodes` dumps -> raw.gpu_inventory (cluster GPU capacity per node).

Accepts the one-line-per-node form (`NodeName=a100gpu1 CfgTRES=cpu=64,...,gres/gpu=4,gres/gpu:a100=4`)
and the default multi-line blocks (`NodeName=...` then indented `Gres=gpu:a100:4(S:0-1)`,
`CfgTRES=...` lines). GPU count: untyped `gres/gpu` in CfgTRES, else the sum of typed keys,
else the `Gres=` field. Nodes without GPUs are kept with gpu_count 0 (they are capacity too).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow as pa

from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile, head_text
from sources.usage._shared import rows_to_table

FORMAT_NAME = "slurm_scontrol_nodes"
SCHEMA: dict[str, pa.DataType] = {
    "node": pa.string(), "gpu_type": pa.string(), "gpu_count": pa.float64(), "cpu_count": pa.float64(),
    "mem_mib": pa.float64(), "source_format": pa.string(), "_source_line": pa.int64(),
}
_NODE = re.compile(r"(?:^|\s)NodeName=(\S+)")
_FIELD = re.compile(r"(?:^|\s)(CfgTRES|Gres)=(\S*)")
_MEM_UNITS = {"K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1048576.0, "": 1.0}


def detect(path: Path, head: bytes) -> bool:
    """Text whose first non-blank line starts with NodeName= and that mentions CfgTRES or Gres."""
    text = head_text(head)
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    return first.lstrip().startswith("NodeName=") and ("CfgTRES=" in text or "Gres=" in text)


def _tres(tres: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in tres.split(",") if "=" in item)


def _node_row(name: str, line: int, fields: dict[str, str]) -> tuple[dict[str, Any] | None, Reject | None]:
    tres = _tres(fields.get("CfgTRES", ""))
    typed = {k.split(":", 1)[1]: v for k, v in tres.items() if k.startswith("gres/gpu:")}
    try:
        if "gres/gpu" in tres:
            count = float(tres["gres/gpu"])
        elif typed:
            count = sum(float(v) for v in typed.values())
        else:
            gres = re.findall(r"gpu(?::([^:,(]+))?:(\d+)", fields.get("Gres", ""))
            count = sum(float(n) for _, n in gres)
            typed = {t: n for t, n in gres if t}
        mem = re.match(r"^([0-9.]+)([KMGT]?)$", tres.get("mem", ""))
        row = {
            "node": name, "gpu_type": ",".join(sorted(typed)) or None, "gpu_count": count,
            "cpu_count": float(tres["cpu"]) if "cpu" in tres else None,
            "mem_mib": float(mem.group(1)) * _MEM_UNITS[mem.group(2)] if mem else None,
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
        name=FORMAT_NAME, family="usage", detect=detect, parse=parse,
        description="scontrol show nodes (CfgTRES / Gres) -> GPU inventory",
    )
]
