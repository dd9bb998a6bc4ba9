"""guidellm benchmark report (`guidellm benchmark --output-path report.json`, ~v0.2).

`{benchmarks: [...]}`; each benchmark is one run (one strategy of a sweep) with its own `id_`.
Every metric is nested per request status (`successful|errored|incomplete|total`), each with
mean/median/... and `percentiles{p001..p999}`. Run statistics use the `successful` block, as
guidellm's own console report does. Times are epoch seconds (UTC); latencies in the
`request_latency` metric are seconds, the `*_ms` metrics are ms.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sources.benchmarks import _util as u
from sources.benchmarks._hardware import hardware_from_metadata, run_columns, unknown_warning
from sources.benchmarks.schema import build_table
from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile

FORMAT_NAME = "guidellm_report"

_LATENCY = {  # guidellm metric -> (our stem, factor to ms)
    "time_to_first_token_ms": ("ttft", 1.0),
    "time_per_output_token_ms": ("tpot", 1.0),
    "inter_token_latency_ms": ("itl", 1.0),
    "request_latency": ("e2el", 1000.0),
}


def detect(path: Path, head: bytes) -> bool:
    """JSON object with `benchmarks` whose entries carry guidellm keys."""
    keys = u.head_json_keys(head)
    return u.head_first_char(head) == "{" and "benchmarks" in keys and bool(keys & {"request_totals", "run_stats", "request_loader"})


def _stat(metrics: dict[str, Any], name: str, field: str, status: str = "successful") -> Any:
    block = (metrics.get(name) or {}).get(status) or {}
    if field.startswith("p") and field != "percentiles":
        return (block.get("percentiles") or {}).get(field)
    return block.get(field)


def parse(path: Path) -> ParseOutput:
    """Each benchmark -> one run row; each listed request -> one request row."""
    path = Path(path)
    doc = u.load_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise UnreadableFile(path, 1, "expected {benchmarks: [...]}")
    out = ParseOutput()
    runs, reqs = [], []
    for idx, b in enumerate(doc["benchmarks"], start=1):
        if not isinstance(b, dict) or not (b.get("id_") or b.get("run_id")):
            out.rejects.append(Reject(idx, "missing_identity", "benchmark has no id_/run_id", "id_", None))
            continue
        c = u.Coercer(idx)
        m = b.get("metrics") or {}
        totals = b.get("request_totals") or {}
        worker = b.get("worker") or {}
        args = b.get("args") or {}
        strategy = (args.get("strategy") or {})
        rate_val = strategy.get("rate")
        rate, rate_label = u.rate(rate_val) if rate_val is not None else (None, strategy.get("type_"))
        run_id = str(b.get("id_") or b.get("run_id"))
        row: dict[str, Any] = {
            "run_id": run_id,
            "tool": "guidellm",
            "run_label": strategy.get("type_"),
            "result_file_stem": path.stem,
            "run_started_at": u.epoch_to_utc(b.get("start_time") or (b.get("run_stats") or {}).get("start_time")),
            "model_id": worker.get("backend_model"),
            "backend_or_provider": worker.get("backend_type"),
            "request_rate": rate,
            "request_rate_label": rate_label,
            "max_concurrency": c.int(strategy.get("streams") or strategy.get("max_concurrency"), "max_concurrency"),
            "num_prompts": c.int(totals.get("total"), "request_totals.total"),
            "duration_s": c.num(b.get("duration"), "duration"),
            "completed": c.int(totals.get("successful"), "request_totals.successful"),
            "failed": c.int(totals.get("errored"), "request_totals.errored"),
            "total_input_tokens": c.int(_stat(m, "prompt_token_count", "total_sum"), "prompt_token_count"),
            "total_output_tokens": c.int(_stat(m, "output_token_count", "total_sum"), "output_token_count"),
            "request_throughput": c.num(_stat(m, "requests_per_second", "mean"), "requests_per_second"),
            "output_throughput_tok_s": c.num(_stat(m, "output_tokens_per_second", "mean"), "output_tokens_per_second"),
            "total_token_throughput": c.num(_stat(m, "tokens_per_second", "mean"), "tokens_per_second"),
            "has_per_request": False,
            "source_format": FORMAT_NAME,
            "_source_line": idx,
        }
        hw_text, hw = hardware_from_metadata(b.get("metadata"), b, doc.get("metadata"), doc)
        row.update(run_columns(hw_text, hw))
        out.warnings.extend(unknown_warning(path.name, f"benchmark {run_id} hardware metadata", hw))
        for metric, (stem, factor) in _LATENCY.items():
            for field, suffix in (("mean", "mean"), ("median", "median"), ("p95", "p95"), ("p99", "p99")):
                val = c.num(_stat(m, metric, field), f"{metric}.{field}")
                row[f"{stem}_ms_{suffix}"] = None if val is None else val * factor
        incomplete = c.int(totals.get("incomplete"), "request_totals.incomplete")
        extra = {
            "type_": b.get("type_"),
            "guidellm_run_id": b.get("run_id"),
            "profile": args.get("profile"),
            "max_duration": args.get("max_duration"),
            "backend_target": worker.get("backend_target"),
            "request_loader_data": (b.get("request_loader") or {}).get("data"),
            "incomplete": incomplete,
        }
        row["metadata"] = u.metadata_json({k: v for k, v in extra.items() if v is not None})
        if row["completed"] == 0:
            out.warnings.append(f"benchmark {run_id} completed zero requests (kept)")
        n_before = len(reqs)
        for status in ("successful", "errored", "incomplete"):
            for r in ((b.get("requests") or {}).get(status) or []):
                if not isinstance(r, dict):
                    continue
                rc = u.Coercer(idx)
                n_out = rc.int(r.get("output_tokens"), "output_tokens")
                reqs.append({
                    "run_id": run_id,
                    "request_index": len(reqs) - n_before,
                    "succeeded": status == "successful",
                    "error": None if status == "successful" else (r.get("error") or status),
                    "input_tokens": rc.int(r.get("prompt_tokens"), "prompt_tokens"),
                    "output_tokens": n_out,
                    "ttft_ms": rc.num(r.get("time_to_first_token_ms"), "time_to_first_token_ms"),
                    "tpot_ms": rc.num(r.get("time_per_output_token_ms"), "time_per_output_token_ms"),
                    "itl_ms_mean": rc.num(r.get("inter_token_latency_ms"), "inter_token_latency_ms"),
                    "e2el_ms": u.ms(rc.num(r.get("request_latency"), "request_latency")),
                    "_source_line": idx,
                })
                out.rejects.extend(rc.rejects)
        # the report keeps only a sample of requests (request_samples), never all of them
        row["has_per_request"] = len(reqs) > n_before
        if row["has_per_request"] and row["num_prompts"] and len(reqs) - n_before < row["num_prompts"]:
            out.warnings.append(f"benchmark {run_id}: {len(reqs) - n_before} of {row['num_prompts']} requests listed (sampled)")
        out.rejects.extend(c.rejects)
        out.warnings.extend(c.warnings())
        runs.append(row)
    out.tables["benchmark_runs"] = build_table("benchmark_runs", runs)
    if reqs:
        out.tables["benchmark_requests"] = build_table("benchmark_requests", reqs)
    return out


FORMATS = [SourceFormat(FORMAT_NAME, "benchmarks", detect, parse, "guidellm benchmarks report JSON (~v0.2)")]
