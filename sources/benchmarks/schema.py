"""Column lists and arrow types of the `benchmarks` raw tables.

Kept in Python (not read from the contract YAML) so parsers stay pure and build typed arrow
tables even when a column is all-null; `tests/sources/test_benchmarks_contract.py` proves the
contract YAML declares exactly these columns and types.
"""

from __future__ import annotations

from typing import Any, Iterable

import pyarrow as pa

ARROW = {
    "VARCHAR": pa.string(),
    "JSON": pa.string(),
    "BIGINT": pa.int64(),
    "DOUBLE": pa.float64(),
    "BOOLEAN": pa.bool_(),
    "TIMESTAMP": pa.timestamp("us"),
    "DATE": pa.date32(),
}

_LAT = [f"{m}_ms_{s}" for m in ("ttft", "tpot", "itl", "e2el") for s in ("mean", "median", "p95", "p99")]

TABLES: dict[str, dict[str, str]] = {
    "benchmark_runs": {
        "run_id": "VARCHAR",
        "tool": "VARCHAR",
        "tool_version": "VARCHAR",
        "run_label": "VARCHAR",
        "result_file_stem": "VARCHAR",
        "run_started_at": "TIMESTAMP",
        "model_id": "VARCHAR",
        "backend_or_provider": "VARCHAR",
        "hardware": "VARCHAR",
        "vm_sku": "VARCHAR",
        "vm_count": "BIGINT",
        "gpu_model": "VARCHAR",
        "gpu_count": "BIGINT",
        "tensor_parallel": "BIGINT",
        "pipeline_parallel": "BIGINT",
        "request_rate": "DOUBLE",
        "request_rate_label": "VARCHAR",
        "max_concurrency": "BIGINT",
        "num_prompts": "BIGINT",
        "duration_s": "DOUBLE",
        "completed": "BIGINT",
        "failed": "BIGINT",
        "total_input_tokens": "BIGINT",
        "total_output_tokens": "BIGINT",
        "request_throughput": "DOUBLE",
        "output_throughput_tok_s": "DOUBLE",
        "total_token_throughput": "DOUBLE",
        **{c: "DOUBLE" for c in _LAT},
        "goodput": "DOUBLE",
        "has_per_request": "BOOLEAN",
        "scenario": "VARCHAR",
        "result_value": "DOUBLE",
        "result_unit": "VARCHAR",
        "accelerators_total": "BIGINT",
        "metadata": "JSON",
        "source_format": "VARCHAR",
    },
    "benchmark_requests": {
        "run_id": "VARCHAR",
        "request_index": "BIGINT",
        "succeeded": "BOOLEAN",
        "error": "VARCHAR",
        "input_tokens": "BIGINT",
        "output_tokens": "BIGINT",
        "ttft_ms": "DOUBLE",
        "tpot_ms": "DOUBLE",
        "itl_ms_mean": "DOUBLE",
        "itl_ms_max": "DOUBLE",
        "e2el_ms": "DOUBLE",
    },
    "benchmark_run_commands": {
        "result_file_stem": "VARCHAR",
        "client_command": "VARCHAR",
        "gpu_type": "VARCHAR",
        "vm_sku": "VARCHAR",
        "vm_count": "BIGINT",
        "gpu_model": "VARCHAR",
        "gpu_count": "BIGINT",
        "tensor_parallel": "BIGINT",
        "pipeline_parallel": "BIGINT",
        "request_rate_label": "VARCHAR",
        "model_id": "VARCHAR",
        "network": "VARCHAR",
    },
    "training_runs": {
        "run_id": "VARCHAR",
        "workload_id": "VARCHAR",
        "run_kind": "VARCHAR",
        "gpu_model": "VARCHAR",
        "gpu_count": "BIGINT",
        "provider": "VARCHAR",
        "pricing_category": "VARCHAR",
        "started_at": "TIMESTAMP",
        "ended_at": "TIMESTAMP",
        "wall_hours": "DOUBLE",
        "time_to_target_hours": "DOUBLE",
        "target_eval_score": "DOUBLE",
        "eval_score_reached": "DOUBLE",
        "reached_target": "BOOLEAN",
        "checkpoints_written": "BIGINT",
        "checkpoint_minutes_total": "DOUBLE",
        "restarts": "BIGINT",
        "outcome": "VARCHAR",
    },
    "eval_runs": {
        "run_id": "VARCHAR",
        "workload_id": "VARCHAR",
        "suite": "VARCHAR",
        "model_id": "VARCHAR",
        "gpu_model": "VARCHAR",
        "gpu_count": "BIGINT",
        "provider": "VARCHAR",
        "pricing_category": "VARCHAR",
        "started_at": "TIMESTAMP",
        "ended_at": "TIMESTAMP",
        "wall_hours": "DOUBLE",
        "tasks_total": "BIGINT",
        "tasks_completed": "BIGINT",
        "tasks_failed": "BIGINT",
        "retries": "BIGINT",
        "outcome": "VARCHAR",
    },
    "media_batches": {
        "batch_id": "VARCHAR",
        "workload_id": "VARCHAR",
        "media_kind": "VARCHAR",
        "gpu_model": "VARCHAR",
        "gpu_count": "BIGINT",
        "started_at": "TIMESTAMP",
        "ended_at": "TIMESTAMP",
        "gpu_hours": "DOUBLE",
        "produced": "BIGINT",
        "accepted": "BIGINT",
        "failed_renders": "BIGINT",
        "seconds_of_video": "DOUBLE",
        "queue_minutes": "DOUBLE",
        "operator_review_minutes": "DOUBLE",
        "moderation_rejected": "BIGINT",
    },
    "memory_fit_tests": {
        "test_id": "VARCHAR",
        "model_id": "VARCHAR",
        "gpu_model": "VARCHAR",
        "gpu_count": "BIGINT",
        "precision": "VARCHAR",
        "context_length": "BIGINT",
        "concurrency": "BIGINT",
        "peak_memory_gb": "DOUBLE",
        "fragmentation_pct": "DOUBLE",
        "oom_count": "BIGINT",
        "safe_margin_pct": "DOUBLE",
    },
    "ops_tests": {
        "test_id": "VARCHAR",
        "workload_id": "VARCHAR",
        "gpu_model": "VARCHAR",
        "kind": "VARCHAR",
        "seconds": "DOUBLE",
        "succeeded": "BOOLEAN",
        "notes": "VARCHAR",
    },
    "quality_outcomes": {
        "workload_id": "VARCHAR",
        "day": "DATE",
        "produced": "BIGINT",
        "accepted": "BIGINT",
        "rejected_quality": "BIGINT",
        "rejected_safety": "BIGINT",
        "filter_name": "VARCHAR",
    },
}


def arrow_schema(table: str) -> pa.Schema:
    """Arrow schema of one raw table, plus the `_source_line` lineage column."""
    cols = TABLES[table]
    return pa.schema([(c, ARROW[t]) for c, t in cols.items()] + [("_source_line", pa.int64())])


def build_table(table: str, rows: Iterable[dict[str, Any]]) -> pa.Table:
    """Typed arrow table from small lists of dicts (JSON documents); missing keys become null."""
    schema = arrow_schema(table)
    rows = list(rows)
    unknown = {k for r in rows for k in r} - set(schema.names)
    if unknown:  # a parser bug, not a data problem: fail loudly
        raise KeyError(f"{table}: unknown columns {sorted(unknown)}")
    return pa.Table.from_pylist(rows, schema=schema)
