"""ray-project LLMPerf outputs: `*_summary.json` (one run) and `*_individual_responses.json`.

Everything LLMPerf measures is in **seconds**; rows are converted to ms. Quirks handled:
`results_number_*_tokens_min/max` written as strings, `results_error_code_frequency` as a
Python-repr string (`'{-100.0: 49}'`), Bedrock's `error_code: -100` ("Output too few tokens")
and its extra `GEN_TEXT` key. `timestamp` is the epoch second the summary was written.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from sources.benchmarks import _util as u
from sources.benchmarks._hardware import hardware_from_metadata, run_columns, unknown_warning
from sources.benchmarks.schema import build_table
from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile

SUMMARY = "llmperf_summary"
INDIVIDUAL = "llmperf_individual"

# LLMPerf metric stem -> our column stem (values in seconds)
_LATENCY = {"ttft_s": "ttft", "end_to_end_latency_s": "e2el", "inter_token_latency_s": "itl"}
_STATS = {"mean": "mean", "quantiles_p50": "median", "quantiles_p95": "p95", "quantiles_p99": "p99"}
_USED_TOP = {
    "version", "name", "model", "num_concurrent_requests", "framework", "timestamp",
    "results_num_requests_started", "results_number_errors", "results_num_completed_requests",
    "results_mean_output_throughput_token_per_s", "results_num_completed_requests_per_min",
}


def detect_summary(path: Path, head: bytes) -> bool:
    """JSON object with LLMPerf's `results_*` keys and its request-shape keys."""
    keys = u.head_json_keys(head)
    return (
        u.head_first_char(head) == "{"
        and any(k.startswith("results_") for k in keys)
        and bool(keys & {"num_concurrent_requests", "mean_input_tokens", "results_ttft_s_mean"})
    )


def detect_individual(path: Path, head: bytes) -> bool:
    """JSON array of request records with `ttft_s`, `end_to_end_latency_s` and `error_code`."""
    keys = u.head_json_keys(head)
    return u.head_first_char(head) == "[" and {"ttft_s", "end_to_end_latency_s", "error_code"} <= keys


def _error_freq(value: Any) -> dict[str, int] | None:
    """`'{-100.0: 49}'` -> {"-100": 49}; codes are floats in the repr."""
    if value in (None, "", "{}"):
        return {} if value == "{}" else None
    try:
        parsed = ast.literal_eval(value) if isinstance(value, str) else value
    except (ValueError, SyntaxError):
        return None
    if not isinstance(parsed, dict):
        return None
    return {f"{float(k):g}" if isinstance(k, (int, float)) else str(k): int(v) for k, v in parsed.items()}


def parse_summary(path: Path) -> ParseOutput:
    """One LLMPerf summary file -> one `benchmark_runs` row."""
    path = Path(path)
    doc = u.load_json(path)
    if not isinstance(doc, dict):
        raise UnreadableFile(path, 1, "expected a JSON object (LLMPerf summary)")
    out = ParseOutput()
    if not doc.get("name") and not doc.get("model"):
        out.rejects.append(Reject(1, "missing_identity", "summary has neither name nor model", "name", None))
        return out
    c = u.Coercer(1)
    completed = c.int(doc.get("results_num_completed_requests"), "results_num_completed_requests")
    per_min = c.num(doc.get("results_num_completed_requests_per_min"), "results_num_completed_requests_per_min")
    mean_out = c.num(doc.get("results_number_output_tokens_mean"), "results_number_output_tokens_mean")
    mean_in = c.num(doc.get("results_number_input_tokens_mean"), "results_number_input_tokens_mean")
    row: dict[str, Any] = {
        "run_id": u.content_id("llmperf", doc.get("name"), doc.get("model"), doc.get("timestamp")),
        "tool": "llmperf",
        "tool_version": doc.get("version"),
        "run_label": doc.get("name"),
        "result_file_stem": path.stem,
        "run_started_at": u.epoch_to_utc(doc.get("timestamp")),
        "model_id": doc.get("model"),
        "backend_or_provider": doc.get("framework"),
        "max_concurrency": c.int(doc.get("num_concurrent_requests"), "num_concurrent_requests"),
        "num_prompts": c.int(doc.get("results_num_requests_started"), "results_num_requests_started"),
        "completed": completed,
        "failed": c.int(doc.get("results_number_errors"), "results_number_errors"),
        "request_throughput": per_min / 60.0 if per_min is not None else None,
        "output_throughput_tok_s": c.num(doc.get("results_mean_output_throughput_token_per_s"), "results_mean_output_throughput_token_per_s"),
        # LLMPerf reports no token totals; mean x completed is exact enough to cost a run (documented)
        "total_input_tokens": round(mean_in * completed) if mean_in is not None and completed is not None else None,
        "total_output_tokens": round(mean_out * completed) if mean_out is not None and completed is not None else None,
        "has_per_request": False,
        "source_format": SUMMARY,
        "_source_line": 1,
    }
    # LLMPerf's `--metadata k=v,...` lands at the top level of the summary
    hw_text, hw = hardware_from_metadata(doc, doc.get("metadata"))
    row.update(run_columns(hw_text, hw))
    out.warnings.extend(unknown_warning(path.name, "hardware metadata", hw))
    for stem, col in _LATENCY.items():
        for stat, suffix in _STATS.items():
            key = f"results_{stem}_{stat}"
            if key in doc:
                row[f"{col}_ms_{suffix}"] = u.ms(c.num(doc[key], key))
    used = set(_USED_TOP) | {f"results_{s}_{t}" for s in _LATENCY for t in _STATS}
    extra = {k: v for k, v in doc.items() if k not in used}
    # keep everything else verbatim (min/max strings included) but make the repr dict real JSON
    if "results_error_code_frequency" in extra:
        freq = _error_freq(extra["results_error_code_frequency"])
        if freq is None:
            out.warnings.append(f"results_error_code_frequency not readable: {extra['results_error_code_frequency']!r}")
        else:
            extra["results_error_code_frequency"] = freq
    row["metadata"] = u.metadata_json(extra)
    if completed == 0:
        out.warnings.append(f"run {row['run_id']} completed zero requests (kept)")
    out.rejects.extend(c.rejects)
    out.warnings.extend(c.warnings())
    out.tables["benchmark_runs"] = build_table("benchmark_runs", [row])
    return out


def parse_individual(path: Path) -> ParseOutput:
    """Per-request records -> `benchmark_requests`, plus one run row aggregated from them.

    The file carries no run metadata (model, provider, time), so the run row only has counts;
    its run_id is derived from the file content and `result_file_stem` lets dbt pair it with
    the summary written by the same run.
    """
    path = Path(path)
    doc = u.load_json(path)
    if not isinstance(doc, list):
        raise UnreadableFile(path, 1, "expected a JSON array of LLMPerf request records")
    out = ParseOutput()
    run_id = u.content_id("llmperf-file", u.file_sha(path))
    reqs = []
    for idx, rec in enumerate(doc, start=1):
        if not isinstance(rec, dict):
            out.rejects.append(Reject(idx, "not_a_record", "array entry is not an object", None, str(rec)[:80]))
            continue
        c = u.Coercer(idx)
        code = rec.get("error_code")
        ok = code in (None, "", 0)
        msg = rec.get("error_msg") or None
        ttft = c.num(rec.get("ttft_s"), "ttft_s")
        e2e = c.num(rec.get("end_to_end_latency_s"), "end_to_end_latency_s")
        n_out = c.int(rec.get("number_output_tokens"), "number_output_tokens")
        itl = c.num(rec.get("inter_token_latency_s"), "inter_token_latency_s")
        if not ok:
            # LLMPerf divides ITL by the output length only for successful requests; on error rows
            # the field holds the *sum* of gaps, so it is not a per-token latency
            itl = None
        tpot = (e2e - ttft) / (n_out - 1) * 1000.0 if ok and None not in (e2e, ttft, n_out) and n_out > 1 else None
        reqs.append({
            "run_id": run_id,
            "request_index": idx - 1,
            "succeeded": ok,
            "error": None if ok else f"{code:g}: {msg}" if isinstance(code, (int, float)) else f"{code}: {msg}",
            "input_tokens": c.int(rec.get("number_input_tokens"), "number_input_tokens"),
            "output_tokens": n_out,
            "ttft_ms": u.ms(ttft),
            "tpot_ms": tpot,
            "itl_ms_mean": u.ms(itl),
            "e2el_ms": u.ms(e2e),
            "_source_line": idx,
        })
        out.rejects.extend(c.rejects)
    ok_rows = [r for r in reqs if r["succeeded"]]
    codes: dict[str, int] = {}
    for r in reqs:
        if not r["succeeded"]:
            key = r["error"].split(":", 1)[0]
            codes[key] = codes.get(key, 0) + 1
    run = {
        "run_id": run_id,
        "tool": "llmperf",
        "run_label": re.sub(r"_individual_responses$", "", path.stem),
        "result_file_stem": path.stem,
        "num_prompts": len(reqs),
        "completed": len(ok_rows),
        "failed": len(reqs) - len(ok_rows),
        "total_input_tokens": sum(r["input_tokens"] or 0 for r in ok_rows),
        "total_output_tokens": sum(r["output_tokens"] or 0 for r in ok_rows),
        "ttft_ms_mean": _mean([r["ttft_ms"] for r in ok_rows]),
        "e2el_ms_mean": _mean([r["e2el_ms"] for r in ok_rows]),
        "itl_ms_mean": _mean([r["itl_ms_mean"] for r in ok_rows]),
        "tpot_ms_mean": _mean([r["tpot_ms"] for r in ok_rows]),
        "has_per_request": True,
        "metadata": u.metadata_json({"aggregated_from_requests": True, "error_code_frequency": codes}),
        "source_format": INDIVIDUAL,
        "_source_line": 1,
    }
    if not ok_rows:
        out.warnings.append(f"run {run_id} completed zero requests (kept)")
    out.tables["benchmark_runs"] = build_table("benchmark_runs", [run])
    out.tables["benchmark_requests"] = build_table("benchmark_requests", reqs)
    return out


def _mean(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


FORMATS = [
    SourceFormat(SUMMARY, "benchmarks", detect_summary, parse_summary, "LLMPerf summary JSON (seconds, string min/max)"),
    SourceFormat(INDIVIDUAL, "benchmarks", detect_individual, parse_individual, "LLMPerf individual responses JSON array"),
]
