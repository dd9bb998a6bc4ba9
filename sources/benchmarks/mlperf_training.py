"""MLPerf Training result logs (`results/<system>/<benchmark>/result_N.txt` in mlcommons/training_results_v*).

Each file is one timed run in MLCommons' MLLOG format: `:::MLLOG {json}` event lines, plus a
`:::SYSJSON {json}` line with the system description (accelerator model, accelerators per node,
nodes). Time to train = `run_stop` - `run_start` (ms); a run whose `run_stop` status is not
`success` did not reach the quality target. One file -> one `benchmark_runs` row (tool
'mlperf_training', model_id = the benchmark, e.g. `llama2_70b_lora`, scenario 'Training',
result in minutes to train). The GPU name is kept as written; dbt maps it to the GPU catalogue.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sources.benchmarks import _util as u
from sources.benchmarks.schema import build_table
from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile

FORMAT_NAME = "mlperf_training_log"

_MLLOG = ":::MLLOG "
_SYSJSON = ":::SYSJSON "
#: MLLOG keys kept in metadata beside the timing (what a reader checks a result against).
_KEPT = ("submission_org", "submission_platform", "submission_division", "submission_status", "seed",
         "global_batch_size", "train_samples", "eval_samples")


def detect(path: Path, head: bytes) -> bool:
    """A text log whose lines carry MLLOG events of a training submission."""
    text = head.decode("utf-8", errors="replace")
    return _MLLOG in text and ('"submission_benchmark"' in text or '"run_start"' in text or _SYSJSON in text)


def _int(value: Any) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def parse(path: Path) -> ParseOutput:
    """The run's benchmark, system, accelerators and minutes to train; a log without both
    `run_start` and `run_stop` is rejected (no time to train), malformed event lines are warned."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise UnreadableFile(path, 1, f"cannot read: {exc}") from exc
    out = ParseOutput()
    system: dict[str, Any] = {}
    events: dict[str, tuple[int, dict[str, Any]]] = {}
    bad = 0
    for no, line in enumerate(lines, start=1):
        for prefix in (_SYSJSON, _MLLOG):
            at = line.find(prefix)
            if at < 0:
                continue
            try:
                doc = json.loads(line[at + len(prefix):])
            except ValueError:
                bad += 1
                if bad <= 3:
                    out.warnings.append(f"line {no}: {prefix.strip()} line is not valid JSON; skipped")
                break
            if prefix == _SYSJSON and isinstance(doc, dict) and not system:
                system = doc
            elif prefix == _MLLOG and isinstance(doc, dict) and isinstance(doc.get("key"), str):
                # the first run_start, the last run_stop; other keys: the first value
                if doc["key"] not in events or doc["key"] == "run_stop":
                    events[doc["key"]] = (no, doc)
            break
    if bad > 3:
        out.warnings.append(f"{bad} malformed MLLOG/SYSJSON lines in all")
    start, stop = events.get("run_start"), events.get("run_stop")
    benchmark = (events.get("submission_benchmark") or (0, {}))[1].get("value")
    if not start or not stop or not benchmark:
        missing = [k for k, v in (("run_start", start), ("run_stop", stop), ("submission_benchmark", benchmark)) if not v]
        out.rejects.append(Reject(len(lines) or 1, "missing_timing", f"MLLOG has no {', '.join(missing)}: no time to train",
                                  missing[0], None))
        out.tables["benchmark_runs"] = build_table("benchmark_runs", [])
        return out
    start_ms, stop_ms = start[1].get("time_ms"), stop[1].get("time_ms")
    if not isinstance(start_ms, (int, float)) or not isinstance(stop_ms, (int, float)) or stop_ms <= start_ms:
        out.rejects.append(Reject(stop[0], "bad_timing", f"run_stop time_ms {stop_ms} is not after run_start {start_ms}",
                                  "time_ms", str(stop_ms)))
        out.tables["benchmark_runs"] = build_table("benchmark_runs", [])
        return out
    per_node, nodes = _int(system.get("accelerators_per_node")), _int(system.get("number_of_nodes"))
    total = per_node * nodes if per_node and nodes else None
    if total is None:
        out.warnings.append(f"{path.name}: no SYSJSON accelerators_per_node x number_of_nodes; GPU count left empty")
    status = (stop[1].get("metadata") or {}).get("status")
    value = lambda k: (events.get(k) or (0, {}))[1].get("value")  # noqa: E731 - a local reader
    meta = {k: value(k) for k in _KEPT if value(k) is not None}
    meta.update({"run_stop_status": status, "samples_count": (stop[1].get("metadata") or {}).get("samples_count"),
                 "framework": system.get("framework"), "accelerator_interconnect": system.get("accelerator_interconnect"),
                 "system_status": system.get("status")})
    seconds = (stop_ms - start_ms) / 1000.0
    row = {
        "run_id": u.content_id("mlperf_training", value("submission_org"), system.get("system_name"), benchmark,
                               value("seed"), start_ms),
        "tool": "mlperf_training",
        "tool_version": None,
        "run_label": value("submission_platform") or system.get("system_name"),
        "result_file_stem": path.stem,
        "run_started_at": datetime.fromtimestamp(start_ms / 1000.0, tz=timezone.utc).replace(tzinfo=None),
        "model_id": benchmark,
        "backend_or_provider": value("submission_org") or system.get("submitter"),
        "hardware": system.get("system_name"),
        "gpu_model": system.get("accelerator_model_name"),
        "gpu_count": total,
        "duration_s": seconds,
        "completed": 1 if status == "success" else 0,
        "failed": 0 if status == "success" else 1,
        "scenario": "Training",
        "result_value": round(seconds / 60.0, 4),
        "result_unit": "minutes to train",
        "accelerators_total": total,
        "has_per_request": False,
        "metadata": u.metadata_json({k: v for k, v in meta.items() if v is not None}),
        "source_format": FORMAT_NAME,
        "_source_line": start[0],
    }
    out.tables["benchmark_runs"] = build_table("benchmark_runs", [row])
    return out


FORMATS = [SourceFormat(FORMAT_NAME, "benchmarks", detect, parse, "MLPerf Training result log (MLLOG result_N.txt)")]
