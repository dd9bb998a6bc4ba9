"""MLPerf Inference results aggregated by MLCommons CM (`cm4mlperf-results` JSON arrays).

One record per (system, model, scenario, metric). Results are per *system*: the accelerator
total is `accelerators_per_node x number_of_nodes`; dividing per GPU is left to dbt.
The only normalisation here is the unit: CM writes `Samples/s` (Offline) and `Queries/s`
(Server) even where MLPerf's metric for an LLM benchmark is tokens/s. From the values
(see docs/sources/benchmarks.md), tokens/s applies to llama2-70b, mixtral-8x7b and gptj from
v4.1, and to llama2-70b Offline in v4.0; v4.0 llama2-70b Server and v3.1/v4.0 gptj really are
queries or samples per second.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sources.benchmarks import _util as u
from sources.benchmarks.schema import build_table
from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile

FORMAT_NAME = "mlperf_cm_results"

_USED = {"Organization", "SystemName", "Model", "MlperfModel", "Scenario", "Result", "Result_Units", "Units",
         "accelerator_model_name", "accelerators_per_node", "number_of_nodes", "version", "uid"}


def detect(path: Path, head: bytes) -> bool:
    """JSON array of records with MLPerf submission keys."""
    keys = u.head_json_keys(head)
    return u.head_first_char(head) == "[" and "Scenario" in keys and bool(keys & {"MlperfModel", "accelerator_model_name"})


def _version(text: Any) -> tuple[int, int] | None:
    m = re.match(r"v?(\d+)\.(\d+)", str(text or ""))
    return (int(m.group(1)), int(m.group(2))) if m else None


def result_unit(model: str, version: Any, scenario: str, units: str | None) -> str | None:
    """The real unit of `Result` (fixing CM's Samples/s / Queries/s label on LLM rows)."""
    if units is None:
        return None
    if units.lower().startswith("watt"):
        return "W"
    low = (model or "").lower()
    is_llm = low.startswith(("llama", "mixtral", "gptj", "gpt-j"))
    v = _version(version)
    if is_llm and v is not None:
        if v >= (4, 1):
            return "tokens/s"
        if low.startswith("llama2-70b") and v == (4, 0) and scenario == "Offline":
            return "tokens/s"
    return {"samples/s": "samples/s", "queries/s": "queries/s"}.get(units.lower(), units)


def parse(path: Path) -> ParseOutput:
    """Every record -> one `benchmark_runs` row (tool 'mlperf'); records without a Result are rejected."""
    path = Path(path)
    doc = u.load_json(path)
    if not isinstance(doc, list):
        raise UnreadableFile(path, 1, "expected a JSON array of MLPerf result records")
    out = ParseOutput()
    rows = []
    fixed = 0
    for idx, rec in enumerate(doc, start=1):
        if not isinstance(rec, dict) or not rec.get("Model") or not rec.get("Scenario"):
            out.rejects.append(Reject(idx, "missing_identity", "record lacks Model/Scenario", "Model", None))
            continue
        c = u.Coercer(idx)
        value = c.num(rec.get("Result"), "Result")
        if value is None and c.rejects:  # Result present but not a number: the row is rejected for that
            out.rejects.extend(c.rejects)
            continue
        if value is None:
            # the power file pairs each performance row with a Watts row whose Result is empty
            out.rejects.append(Reject(idx, "missing_result", f"{rec.get('Units')} record has no Result", "Result", None))
            continue
        per_node = c.int(rec.get("accelerators_per_node"), "accelerators_per_node") if rec.get("accelerators_per_node") != "N/A" else None
        if rec.get("accelerators_per_node") == "N/A":
            out.warnings.append(f"record {idx}: accelerators_per_node is 'N/A'; accelerators_total left empty")
        nodes = c.int(rec.get("number_of_nodes"), "number_of_nodes")
        total = per_node * nodes if per_node is not None and nodes is not None else None
        units = rec.get("Units") or rec.get("Result_Units")
        unit = result_unit(rec.get("Model"), rec.get("version"), rec.get("Scenario"), units)
        if unit == "tokens/s" and units != "tokens/s":
            fixed += 1
        extra = {k: v for k, v in rec.items() if k not in _USED}
        extra["units_as_written"] = units
        rows.append({
            "run_id": u.content_id("mlperf", rec.get("uid"), rec.get("version"), rec.get("Model"), rec.get("Scenario"), units, rec.get("Organization"), rec.get("SystemName")),
            "tool": "mlperf",
            "tool_version": rec.get("version"),
            "run_label": rec.get("Platform") or rec.get("SystemName"),
            "result_file_stem": path.stem,
            "model_id": rec.get("Model"),
            "backend_or_provider": rec.get("Organization"),
            "hardware": rec.get("SystemName"),
            "gpu_model": rec.get("accelerator_model_name"),
            "gpu_count": total,
            "scenario": rec.get("Scenario"),
            "result_value": value,
            "result_unit": unit,
            "accelerators_total": total,
            "output_throughput_tok_s": value if unit == "tokens/s" else None,
            "has_per_request": False,
            "metadata": u.metadata_json(extra),
            "source_format": FORMAT_NAME,
            "_source_line": idx,
        })
        out.rejects.extend(c.rejects)
        out.warnings.extend(c.warnings())
    if fixed:
        out.warnings.append(f"{fixed} LLM records relabelled tokens/s (file says Samples/s or Queries/s)")
    out.tables["benchmark_runs"] = build_table("benchmark_runs", rows)
    return out


FORMATS = [SourceFormat(FORMAT_NAME, "benchmarks", detect, parse, "MLPerf Inference results from cm4mlperf-results (JSON array)")]
