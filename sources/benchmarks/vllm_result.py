"""vLLM `benchmark_serving.py --save-result` / `vllm bench serve` result JSON.

One run per file -> one `benchmark_runs` row; when the per-request arrays are present
(`input_lens`, `output_lens`, `ttfts`, `itls`, `errors`, ...) also one `benchmark_requests` row per
request. Handles the key variants of several vLLM versions: `request_goodput:` (real trailing
colon) or `request_goodput`, `request_rate` as the string "inf", percentile keys
`p{N}_{metric}_ms` with any N (p99.9 included), `e2el`, `failed`, `endpoint_type` instead of
`backend`. Unknown top-level keys are kept in `metadata`.
"""

from __future__ import annotations

import re
import statistics
from datetime import datetime
from pathlib import Path
from typing import Any

from sources.benchmarks import _util as u
from sources.benchmarks.schema import build_table
from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile

FORMAT_NAME = "vllm_serving_result"

_STAT_RE = re.compile(r"^(mean|median|std|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el)_ms$")
_PER_REQUEST = ("input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors", "start_times", "latencies", "e2els")
_SCALARS = {
    "date", "backend", "endpoint_type", "model_id", "tokenizer_id", "num_prompts", "request_rate",
    "burstiness", "max_concurrency", "duration", "completed", "failed", "total_input_tokens",
    "total_output_tokens", "request_throughput", "request_goodput:", "request_goodput",
    "output_throughput", "total_token_throughput",
}
# keys every result of the sampled version has; a missing one means another tool version
_EXPECTED = ("date", "model_id", "duration", "completed", "request_throughput", "output_throughput", "mean_ttft_ms")


def detect(path: Path, head: bytes) -> bool:
    """A JSON object naming `model_id` plus vLLM's throughput/latency keys."""
    if u.head_first_char(head) != "{":
        return False
    keys = u.head_json_keys(head)
    if "model_id" not in keys and "tokenizer_id" not in keys:
        return False
    vllm_keys = {"request_throughput", "output_throughput", "total_token_throughput", "completed", "num_prompts"}
    return len(keys & vllm_keys) >= 2 or any(_STAT_RE.match(k) for k in keys)


def _parse_date(value: Any, warnings: list[str]) -> datetime | None:
    """vLLM writes local time `%Y%m%d-%H%M%S` without a zone: treated as UTC (documented).

    A run left without a start still loads as benchmark evidence, but no month can hold its GPU time:
    it is not charged, and the warning check assert_charged_benchmark_runs_have_a_start lists it."""
    if isinstance(value, str):
        for fmt in ("%Y%m%d-%H%M%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"):
            try:
                return datetime.strptime(value.strip(), fmt)
            except ValueError:
                continue
    what = "no date" if value is None or value == "" else f"unrecognised date {value!r}"
    warnings.append(f"{what}; run_started_at left empty, so the run's GPU time is not charged")
    return None


def parse_result(doc: dict[str, Any], path: Path, *, source_format: str = FORMAT_NAME) -> ParseOutput:
    """Map one vLLM result object (already loaded) to runs/requests rows."""
    out = ParseOutput()
    c = u.Coercer(line=1)
    stem = path.name[: -len(".json")] if path.name.endswith(".json") else path.stem
    model = doc.get("model_id") or doc.get("tokenizer_id")
    if not model and not doc.get("date"):
        out.rejects.append(Reject(1, "missing_identity", "result has neither model_id/tokenizer_id nor date", "model_id", None))
        return out
    missing = [k for k in _EXPECTED if k not in doc]
    if missing:
        out.warnings.append(f"unknown vLLM result version: missing keys {missing}; loaded what is there")

    rate, rate_label = u.rate(doc.get("request_rate"))
    tp, pp = u.parallelism_from_name(stem)
    gp = doc["request_goodput:"] if "request_goodput:" in doc else doc.get("request_goodput")
    row: dict[str, Any] = {
        "tool": "vllm",
        "tool_version": doc.get("vllm_version") or doc.get("version"),
        "run_label": doc.get("label"),
        "result_file_stem": stem,
        "run_started_at": _parse_date(doc.get("date"), out.warnings),
        "model_id": model,
        "backend_or_provider": doc.get("backend") or doc.get("endpoint_type"),
        "tensor_parallel": tp,
        "pipeline_parallel": pp,
        "request_rate": rate,
        "request_rate_label": rate_label,
        "max_concurrency": c.int(doc.get("max_concurrency"), "max_concurrency"),
        "num_prompts": c.int(doc.get("num_prompts"), "num_prompts"),
        "duration_s": c.num(doc.get("duration"), "duration"),
        "completed": c.int(doc.get("completed"), "completed"),
        "failed": c.int(doc.get("failed"), "failed"),
        "total_input_tokens": c.int(doc.get("total_input_tokens"), "total_input_tokens"),
        "total_output_tokens": c.int(doc.get("total_output_tokens"), "total_output_tokens"),
        "request_throughput": c.num(doc.get("request_throughput"), "request_throughput"),
        "output_throughput_tok_s": c.num(doc.get("output_throughput"), "output_throughput"),
        "total_token_throughput": c.num(doc.get("total_token_throughput"), "total_token_throughput"),
        "goodput": c.num(gp, "request_goodput"),
        "source_format": source_format,
        "_source_line": 1,
    }
    extra: dict[str, Any] = {}
    other_pcts: dict[str, dict[str, float | None]] = {}
    for key, value in doc.items():
        m = _STAT_RE.match(key)
        if m:
            stat, metric = m.groups()
            col = {"mean": "mean", "median": "median", "p95": "p95", "p99": "p99"}.get(stat)
            val = c.num(value, key)
            if col:
                row[f"{metric}_ms_{col}"] = val
            elif stat == "p50":
                row.setdefault(f"{metric}_ms_median", val)
            else:  # std and other percentiles (p90, p99.9, ...) are kept, not dropped
                other_pcts.setdefault(f"{metric}_ms", {})[stat] = val
        elif key in _SCALARS or key in _PER_REQUEST:
            continue
        elif key == "_stripped_per_request_arrays":
            extra["stripped_per_request_arrays"] = value
        else:
            extra[key] = value
    for key in ("tokenizer_id", "burstiness"):
        if key in doc:
            extra[key] = doc[key]
    if other_pcts:
        extra["other_stats"] = other_pcts
    row["metadata"] = u.metadata_json(extra)

    has_requests = isinstance(doc.get("output_lens"), list) and isinstance(doc.get("ttfts"), list)
    row["has_per_request"] = has_requests
    row["run_id"] = u.content_id(
        "vllm", doc.get("date"), model, doc.get("backend"), doc.get("request_rate"),
        doc.get("num_prompts"), doc.get("duration"), doc.get("completed"),
    )
    if row["completed"] == 0:
        out.warnings.append(f"run {row['run_id']} completed zero requests (kept; throughput/latency are empty)")
    out.rejects.extend(c.rejects)
    out.warnings.extend(c.warnings())
    out.tables["benchmark_runs"] = build_table("benchmark_runs", [row])
    if has_requests:
        reqs = _requests(doc, row["run_id"], out)
        out.tables["benchmark_requests"] = build_table("benchmark_requests", reqs)
        if row["total_output_tokens"] is not None:
            got = sum(r["output_tokens"] or 0 for r in reqs if r["succeeded"])
            if got != row["total_output_tokens"]:
                out.warnings.append(f"sum of output_lens of successful requests ({got}) != total_output_tokens ({row['total_output_tokens']})")
    return out


def _requests(doc: dict[str, Any], run_id: str, out: ParseOutput) -> list[dict[str, Any]]:
    """Per-request rows from the parallel arrays; ttfts/itls are seconds in the file."""
    outs = doc.get("output_lens") or []
    n = len(outs)
    arrays = {k: doc.get(k) for k in ("input_lens", "ttfts", "itls", "errors", "latencies", "e2els")}
    for k, v in arrays.items():
        if isinstance(v, list) and len(v) != n:
            out.warnings.append(f"per-request array {k} has {len(v)} entries, output_lens has {n}; extra entries ignored")
    def at(name: str, i: int) -> Any:
        arr = arrays.get(name)
        return arr[i] if isinstance(arr, list) and i < len(arr) else None

    rows = []
    for i in range(n):
        c = u.Coercer(line=i + 1)
        err = at("errors", i)
        err_text = None if err in (None, "") else str(err)
        ttft_s = c.num(at("ttfts", i), "ttfts")
        itls = at("itls", i)
        itl_vals = [float(x) for x in itls if isinstance(x, (int, float))] if isinstance(itls, list) else []
        out_len = c.int(outs[i], "output_lens")
        e2e_s = c.num(at("e2els", i) if at("e2els", i) is not None else at("latencies", i), "latencies")
        if e2e_s is None and ttft_s is not None and isinstance(itls, list) and err_text is None:
            # derived: arrival of the last token = ttft + every inter-token gap (what vLLM times as latency)
            e2e_s = ttft_s + sum(itl_vals)
        tpot = None
        if out_len is not None and out_len > 1 and e2e_s is not None and ttft_s is not None:
            tpot = (e2e_s - ttft_s) / (out_len - 1) * 1000.0
        rows.append({
            "run_id": run_id,
            "request_index": i,
            "succeeded": err_text is None,
            "error": err_text,
            "input_tokens": c.int(at("input_lens", i), "input_lens"),
            "output_tokens": out_len,
            "ttft_ms": u.ms(ttft_s),
            "tpot_ms": tpot,
            "itl_ms_mean": statistics.fmean(itl_vals) * 1000.0 if itl_vals else None,
            "itl_ms_max": max(itl_vals) * 1000.0 if itl_vals else None,
            "e2el_ms": u.ms(e2e_s),
            "_source_line": i + 1,
        })
        out.rejects.extend(c.rejects)
    return rows


def parse(path: Path) -> ParseOutput:
    """Read one vLLM result file."""
    doc = u.load_json(path)
    if not isinstance(doc, dict):
        raise UnreadableFile(path, 1, "expected a JSON object (one vLLM result)")
    return parse_result(doc, Path(path))


FORMATS = [
    SourceFormat(
        name=FORMAT_NAME,
        family="benchmarks",
        detect=detect,
        parse=parse,
        description="vLLM benchmark_serving / vllm bench serve --save-result JSON (summary or full with per-request arrays)",
    )
]
