"""Where the time of a refresh went: seconds per stage, kept in last_refresh.json.

Stages are the Dagster steps of the run (landing, parse + load per family, dbt build, the
great-expectations suites, publish, team reports, dbt docs), timed from their STEP_START to
STEP_SUCCESS / STEP_FAILURE events; the dbt build is broken down by node type from dbt's own
run_results.json (`dbt <type>`: the summed execution time of its nodes, which run two at a time,
so the parts can add up to more than the step). `gpu-ledger run --profile` prints the table.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import dagster as dg

from pipelines.progress import stage_name

#: Set by the dbt asset after its build: {node type: summed seconds}. One refresh per process at a time.
DBT_NODE_SECONDS: dict[str, float] = {}


def dbt_node_seconds(run_results: dict[str, Any]) -> dict[str, float]:
    """Summed execution time per dbt resource type (model, test, unit_test, seed, ...)."""
    out: dict[str, float] = {}
    for r in run_results.get("results", []):
        kind = str(r.get("unique_id", "?")).split(".")[0]
        out[kind] = out.get(kind, 0.0) + float(r.get("execution_time") or 0.0)
    return {k: round(v, 1) for k, v in sorted(out.items())}


def stage_seconds(events: Iterable[dg.DagsterEvent | Any]) -> dict[str, float]:
    """Seconds per stage from a run's step events (`EventLogEntry` or `DagsterEvent` with a timestamp)."""
    started: dict[str, float] = {}
    out: dict[str, float] = {}
    for e in events:
        event = getattr(e, "dagster_event", e)
        ts = getattr(e, "timestamp", None)
        if event is None or not getattr(event, "step_key", None) or ts is None:
            continue
        kind = event.event_type_value
        if kind == "STEP_START":
            started[event.step_key] = ts
        elif kind in ("STEP_SUCCESS", "STEP_FAILURE") and event.step_key in started:
            out[stage_name(event.step_key)] = round(ts - started[event.step_key], 1)
    return out


def run_profile(instance: dg.DagsterInstance, run_id: str, total_seconds: float) -> dict[str, Any]:
    """The profile of one finished run: total, stages in run order, dbt build by node type."""
    # Only the step events, not the run's whole log (a materialization or check outcome per dbt node).
    steps = {dg.DagsterEventType.STEP_START, dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE}
    records = [r.event_log_entry for r in instance.get_records_for_run(run_id, of_type=steps).records]
    return {"total_s": round(total_seconds, 1), "stages_s": stage_seconds(records),
            "dbt_node_types_s": dict(DBT_NODE_SECONDS)}


def format_profile(profile: dict[str, Any]) -> str:
    """A plain table: one line per stage, then the dbt breakdown."""
    lines = [f"{'stage':<34} {'seconds':>8}"]
    lines += [f"{name:<34} {secs:>8.1f}" for name, secs in profile.get("stages_s", {}).items()]
    for kind, secs in profile.get("dbt_node_types_s", {}).items():
        lines.append(f"{'  dbt ' + kind + ' (summed)':<34} {secs:>8.1f}")
    lines.append(f"{'total (wall clock)':<34} {profile.get('total_s', 0.0):>8.1f}")
    return "\n".join(lines)
