"""`<result>.commands.json` written next to a vLLM result: `{client_command, gpu_type}`.

The pipeline loads one file at a time, so this is its own format filling
`benchmark_run_commands`; dbt joins it to `benchmark_runs` on `result_file_stem`.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from sources.benchmarks import _util as u
from sources.benchmarks._hardware import unknown_warning
from sources.benchmarks.schema import build_table
from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile

FORMAT_NAME = "vllm_run_commands"


def detect(path: Path, head: bytes) -> bool:
    """A JSON object with `client_command` (and usually `gpu_type`)."""
    return u.head_first_char(head) == "{" and "client_command" in u.head_json_keys(head)


def _flags(command: str) -> dict[str, str]:
    """`--name value` and `--name=value` pairs of a shell command line (last one wins)."""
    try:
        tokens = shlex.split(command)
    except ValueError:
        tokens = command.split()
    flags: dict[str, str] = {}
    for i, tok in enumerate(tokens):
        if not tok.startswith("-"):
            continue
        if "=" in tok:
            name, value = tok.split("=", 1)
            flags[name.lstrip("-")] = value
        elif i + 1 < len(tokens) and not tokens[i + 1].startswith("-"):
            flags[tok.lstrip("-")] = tokens[i + 1]
        else:
            flags[tok.lstrip("-")] = ""
    return flags


def result_stem(path: Path) -> str:
    """`x.commands.json` / `x.commands` -> `x` (the result file's stem)."""
    name = path.name
    for suffix in (".commands.json", ".commands", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def parse(path: Path) -> ParseOutput:
    """Read one commands file into a single `benchmark_run_commands` row."""
    path = Path(path)
    doc = u.load_json(path)
    if not isinstance(doc, dict):
        raise UnreadableFile(path, 1, "expected a JSON object with client_command")
    out = ParseOutput()
    command = doc.get("client_command")
    if not isinstance(command, str) or not command.strip():
        out.rejects.append(Reject(1, "missing_identity", "client_command is empty", "client_command", None))
        return out
    flags = _flags(command)
    stem = result_stem(path)
    tp = flags.get("tensor-parallel-size") or flags.get("tp")
    pp = flags.get("pipeline-parallel-size") or flags.get("pp")
    # the file name carries the layout (`_tp8_pp2_`); so does --result-filename for most runs
    name_tp, name_pp = u.parallelism_from_name(stem)
    rf_tp, rf_pp = u.parallelism_from_name(flags.get("result-filename", ""))
    hw = u.parse_gpu_type(doc.get("gpu_type"))
    extra = {k: v for k, v in doc.items() if k not in ("client_command", "gpu_type")}
    if extra:
        out.warnings.append(f"unexpected keys ignored: {sorted(extra)}")
    out.warnings.extend(unknown_warning(path.name, "gpu_type", hw))
    if hw["gpu_model"] and hw["gpu_count"] is None:
        out.warnings.append(f"{path.name}: gpu_type {doc.get('gpu_type')!r}: GPU count not whole or not verified (left empty)")
    hw.pop("unknown")
    row: dict[str, Any] = {
        "result_file_stem": stem,
        "client_command": re.sub(r"\s+", " ", command).strip(),
        "gpu_type": doc.get("gpu_type"),
        **hw,
        "tensor_parallel": int(tp) if tp and tp.isdigit() else (name_tp or rf_tp),
        "pipeline_parallel": int(pp) if pp and pp.isdigit() else (name_pp or rf_pp),
        "request_rate_label": flags.get("request-rate") or u.qps_from_name(stem),
        "model_id": flags.get("model"),
        "_source_line": 1,
    }
    out.tables["benchmark_run_commands"] = build_table("benchmark_run_commands", [row])
    return out


FORMATS = [
    SourceFormat(
        name=FORMAT_NAME,
        family="benchmarks",
        detect=detect,
        parse=parse,
        description="vLLM benchmark .commands.json sidecar ({client_command, gpu_type})",
    )
]
