"""Where the time of a refresh went: seconds per stage, kept in last_refresh.json.

Stages are the Dagster steps of the run (landing, parse + load per family, dbt build, the
great-expectations suites, publish, team reports, dbt docs), timed from their STEP_START to
STEP_SUCCESS / STEP_FAILURE events; the dbt build is broken down by node type from dbt's own
run_results.json (`dbt <type>`: the summed execution time of its nodes, which run two at a time,
so the parts can add up to more than the step). Before the run, the inputs are landed and compared with
the last build's (pipelines/refresh_state.py `plan_refresh`): that is the first stage, since a first refresh
reads every input byte there (8.2 GB at 1,000 GPUs x 30 days), and the total runs from its start.
`gpu-ledger run --profile` prints the table.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import dagster as dg

from pipelines.progress import stage_name

#: The stage before the Dagster run: every input landed (a new byte read once, hashed while copied) and
#: compared with what the last build started from.
BEFORE_RUN_STAGE = "landing + change check (pre-run)"

#: Set by the dbt asset after its build: {node type: summed seconds}. One refresh per process at a time.
DBT_NODE_SECONDS: dict[str, float] = {}


def dbt_node_seconds(run_results: dict[str, Any]) -> dict[str, float]:
    """Summed execution time per dbt resource type (model, test, unit_test, seed, ...)."""
    out: dict[str, float] = {}
    for r in run_results.get("results", []):
        kind = str(r.get("unique_id", "?")).split(".")[0]
        out[kind] = out.get(kind, 0.0) + float(r.get("execution_time") or 0.0)
    return {k: round(v, 1) for k, v in sorted(out.items())}


def step_spans(events: Iterable[dg.DagsterEvent | Any]) -> list[tuple[str, float, float]]:
    """(step key, start, end) of each finished step, in the order the steps ended, from a run's step events
    (`EventLogEntry` or `DagsterEvent` with a timestamp): its STEP_START to its STEP_SUCCESS / STEP_FAILURE."""
    started: dict[str, float] = {}
    out: list[tuple[str, float, float]] = []
    for e in events:
        event = getattr(e, "dagster_event", e)
        ts = getattr(e, "timestamp", None)
        if event is None or not getattr(event, "step_key", None) or ts is None:
            continue
        kind = event.event_type_value
        if kind == "STEP_START":
            started[event.step_key] = ts
        elif kind in ("STEP_SUCCESS", "STEP_FAILURE") and event.step_key in started:
            out.append((event.step_key, started[event.step_key], ts))
    return out


def stage_seconds(events: Iterable[dg.DagsterEvent | Any]) -> dict[str, float]:
    """Seconds per stage from a run's step events (`step_spans`)."""
    return {stage_name(step): round(end - start, 1) for step, start, end in step_spans(events)}


def run_profile(instance: dg.DagsterInstance, run_id: str, total_seconds: float,
                before_run_s: float = 0.0) -> dict[str, Any]:
    """The profile of one finished run (`profile_of`), its stages from the run's step events."""
    # Only the step events, not the run's whole log (a materialization or check outcome per dbt node).
    steps = {dg.DagsterEventType.STEP_START, dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE}
    records = [r.event_log_entry for r in instance.get_records_for_run(run_id, of_type=steps).records]
    return profile_of(stage_seconds(records), total_seconds, before_run_s, dict(DBT_NODE_SECONDS))


def profile_of(stages: dict[str, float], total_seconds: float, before_run_s: float,
               node_types: dict[str, float]) -> dict[str, Any]:
    """Total (from the start of the stage before the run to the run's end), the stage before the run
    (BEFORE_RUN_STAGE) then the run's stages in run order, and the dbt build by node type."""
    return {"total_s": round(total_seconds, 1), "stages_s": {BEFORE_RUN_STAGE: round(before_run_s, 1), **stages},
            "dbt_node_types_s": node_types}


def format_profile(profile: dict[str, Any]) -> str:
    """A plain table: one line per stage, then the dbt breakdown."""
    lines = [f"{'stage':<34} {'seconds':>8}"]
    lines += [f"{name:<34} {secs:>8.1f}" for name, secs in profile.get("stages_s", {}).items()]
    for kind, secs in profile.get("dbt_node_types_s", {}).items():
        lines.append(f"{'  dbt ' + kind + ' (summed)':<34} {secs:>8.1f}")
    stages = profile.get("stages_s", {})
    if BEFORE_RUN_STAGE in stages:  # a build's total spans its stages: the rest is imports and the run's set-up
        outside = max(0.0, profile.get("total_s", 0.0) - sum(stages.values()))
        lines.append(f"{'outside the stages (imports, run)':<34} {outside:>8.1f}")
    lines.append(f"{'total (wall clock)':<34} {profile.get('total_s', 0.0):>8.1f}")
    return "\n".join(lines)
