"""NVIDIA GenAI-Perf `profile_export_genai_perf.json` (and AIPerf `profile_export_aiperf.json`).

Built from the documented layout (no real sample in the shared data; the test fixture is
constructed): one object whose metric keys are `{unit, avg, min, max, p25..p99, std}` blocks,
e.g. `request_throughput`, `request_latency`, `time_to_first_token`, `inter_token_latency`,
`output_token_throughput`, `output_sequence_length`, `input_sequence_length`, plus the run's
`input_config` (model, endpoint, concurrency/request rate). Units are read from `unit` where
present; latencies default to ms.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sources.benchmarks import _util as u
from sources.benchmarks._hardware import hardware_from_metadata, run_columns, unknown_warning
from sources.benchmarks.schema import build_table
from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile

FORMAT_NAME = "genai_perf_profile_export"

_LATENCY = {"time_to_first_token": "ttft", "inter_token_latency": "itl", "request_latency": "e2el", "time_per_output_token": "tpot"}
_TO_MS = {"ms": 1.0, "s": 1000.0, "sec": 1000.0, "us": 0.001, "ns": 1e-6}


def detect(path: Path, head: bytes) -> bool:
    """JSON object with GenAI-Perf metric blocks (`time_to_first_token` + `request_throughput`)."""
    keys = u.head_json_keys(head)
    return (
        u.head_first_char(head) == "{"
        and "time_to_first_token" in keys
        and bool(keys & {"request_throughput", "output_token_throughput", "request_latency"})
        and "model_id" not in keys
    )


def _model(cfg: dict[str, Any]) -> str | None:
    m = cfg.get("model") or cfg.get("model_names") or (cfg.get("endpoint") or {}).get("model_names")
    if isinstance(m, list):
        return ",".join(map(str, m)) or None
    return m


def parse(path: Path) -> ParseOutput:
    """One profile export -> one `benchmark_runs` row."""
    path = Path(path)
    doc = u.load_json(path)
    if not isinstance(doc, dict):
        raise UnreadableFile(path, 1, "expected a JSON object (GenAI-Perf profile export)")
    out = ParseOutput()
    cfg = doc.get("input_config") or {}
    model = _model(cfg) or (doc.get("metadata") or {}).get("model")
    if not model and not doc.get("request_throughput"):
        out.rejects.append(Reject(1, "missing_identity", "no model in input_config and no metrics", "input_config.model", None))
        return out
    c = u.Coercer(1)

    def block(name: str) -> dict[str, Any]:
        b = doc.get(name)
        return b if isinstance(b, dict) else {}

    stimulus = ((cfg.get("perf_analyzer") or {}).get("stimulus") or {})
    conc = cfg.get("concurrency", stimulus.get("concurrency"))
    rate_val = cfg.get("request_rate", stimulus.get("request_rate"))
    rate, rate_label = u.rate(rate_val)
    endpoint = cfg.get("endpoint") if isinstance(cfg.get("endpoint"), dict) else {}
    req_count = block("request_count").get("avg") if isinstance(doc.get("request_count"), dict) else doc.get("request_count")
    row: dict[str, Any] = {
        "run_id": u.content_id("genai-perf", u.file_sha(path)),
        "tool": "genai-perf",
        "tool_version": doc.get("genai_perf_version") or doc.get("aiperf_version") or cfg.get("genai_perf_version"),
        "result_file_stem": path.stem,
        "model_id": model,
        "backend_or_provider": cfg.get("service_kind") or cfg.get("backend") or endpoint.get("service_kind"),
        "request_rate": rate,
        "request_rate_label": rate_label,
        "max_concurrency": c.int(conc, "concurrency"),
        "completed": c.int(req_count, "request_count"),
        "request_throughput": c.num(block("request_throughput").get("avg"), "request_throughput.avg"),
        "output_throughput_tok_s": c.num(block("output_token_throughput").get("avg"), "output_token_throughput.avg"),
        "has_per_request": False,
        "source_format": FORMAT_NAME,
        "_source_line": 1,
    }
    hw_text, hw = hardware_from_metadata(doc, doc.get("metadata"), cfg)
    row.update(run_columns(hw_text, hw))
    out.warnings.extend(unknown_warning(path.name, "hardware metadata", hw))
    start = doc.get("start_time")
    if isinstance(start, (int, float)):
        row["run_started_at"] = u.epoch_to_utc(start)
    for metric, stem in _LATENCY.items():
        b = block(metric)
        if not b:
            continue
        factor = _TO_MS.get(str(b.get("unit", "ms")).split("/")[0].strip().lower(), 1.0)
        for field, suffix in (("avg", "mean"), ("p50", "median"), ("p95", "p95"), ("p99", "p99")):
            val = c.num(b.get(field), f"{metric}.{field}")
            row[f"{stem}_ms_{suffix}"] = None if val is None else val * factor
    used = {"input_config", "request_throughput", "output_token_throughput", "request_count", *_LATENCY}
    extra = {k: v for k, v in doc.items() if k not in used}
    extra["input_config"] = cfg
    row["metadata"] = u.metadata_json(extra)
    out.rejects.extend(c.rejects)
    out.warnings.extend(c.warnings())
    out.tables["benchmark_runs"] = build_table("benchmark_runs", [row])
    return out


FORMATS = [SourceFormat(FORMAT_NAME, "benchmarks", detect, parse, "NVIDIA GenAI-Perf / AIPerf profile_export JSON (documented layout)")]
