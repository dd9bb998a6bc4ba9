"""vLLM nightly-benchmark `benchmark_results.json`: a list of rows with display column names.

Columns are spaces-and-symbols (`Tput (req/s)`, `P99 TTFT (ms)`, `# of req.`). Each row is one
run summarised again from the per-run results, so dbt should prefer the per-run file when both
are loaded; run_id here is derived from the file content and row index.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sources.benchmarks import _util as u
from sources.benchmarks._hardware import unknown_warning
from sources.benchmarks.schema import build_table
from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile

FORMAT_NAME = "vllm_nightly_table"

# display name -> benchmark_runs column
COLUMNS = {
    "# of req.": "num_prompts",
    "Tput (req/s)": "request_throughput",
    "Output Tput (tok/s)": "output_throughput_tok_s",
    "Total Tput (tok/s)": "total_token_throughput",
    **{f"{s} {m} (ms)": f"{m.lower()}_ms_{c}" for s, c in (("Mean", "mean"), ("Median", "median"), ("P95", "p95"), ("P99", "p99"))
       for m in ("TTFT", "TPOT", "ITL", "E2EL")},
}


def detect(path: Path, head: bytes) -> bool:
    """A JSON array whose records have `Test name` and `Tput (req/s)`-style keys."""
    keys = u.head_json_keys(head)
    return u.head_first_char(head) == "[" and "Test name" in keys and ("Tput (req/s)" in keys or "GPU" in keys)


def parse(path: Path) -> ParseOutput:
    """Read the nightly table into `benchmark_runs` rows (one per table row)."""
    path = Path(path)
    doc = u.load_json(path)
    if not isinstance(doc, list):
        raise UnreadableFile(path, 1, "expected a JSON array of table rows")
    sha = u.file_sha(path)
    out = ParseOutput()
    rows = []
    for idx, rec in enumerate(doc, start=1):
        if not isinstance(rec, dict) or not rec.get("Test name"):
            out.rejects.append(Reject(idx, "missing_identity", "row has no 'Test name'", "Test name", None))
            continue
        c = u.Coercer(idx)
        name = str(rec["Test name"])
        hw = u.parse_gpu_type(rec.get("GPU"))
        out.warnings.extend(f"row {idx}: {w}" for w in unknown_warning(path.name, "GPU", hw))
        tp, pp = u.parallelism_from_name(name)
        label = u.qps_from_name(name)
        rate, rate_label = u.rate(label)
        row: dict[str, Any] = {
            "run_id": u.content_id("vllm-table", sha, idx),
            "tool": "vllm",
            "run_label": name,
            "hardware": rec.get("GPU"),
            "vm_sku": hw["vm_sku"],
            "vm_count": hw["vm_count"],
            "gpu_model": hw["gpu_model"],
            "gpu_count": hw["gpu_count"],
            "tensor_parallel": tp,
            "pipeline_parallel": pp,
            "request_rate": rate,
            "request_rate_label": rate_label,
            "has_per_request": False,
            "source_format": FORMAT_NAME,
            "_source_line": idx,
        }
        extra = {}
        for key, value in rec.items():
            if key in COLUMNS:
                col = COLUMNS[key]
                row[col] = c.int(value, key) if col == "num_prompts" else c.num(value, key)
            elif key not in ("Test name", "GPU"):
                extra[key] = value
        if hw["network"]:
            extra["network"] = hw["network"]
        row["metadata"] = u.metadata_json(extra)
        out.rejects.extend(c.rejects)
        out.warnings.extend(c.warnings())
        rows.append(row)
    out.tables["benchmark_runs"] = build_table("benchmark_runs", rows)
    return out


FORMATS = [
    SourceFormat(
        name=FORMAT_NAME,
        family="benchmarks",
        detect=detect,
        parse=parse,
        description="vLLM nightly benchmark_results.json table (display column names)",
    )
]
