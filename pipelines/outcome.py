"""How a nightly run ended, written to HOME/last_refresh.json: the status file's one writer.

An in-process run (`gpu-ledger run`) records its outcome from the CLI; a run the Dagster daemon
launched is recorded by the run-status sensors in `defs/sensors.py`. Both come through here, so
the success and failure records have one shape and one author.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import dagster as dg

from warehouse.status import write_status

PUBLICATION_KEY = dg.AssetKey(["serving", "publication"])


def failure_reason(step_failures: Iterable[dg.DagsterEvent], fallback: str = "run failed") -> str:
    """`<step>: <innermost error message>` per failed step (the innermost cause names the problem)."""
    reasons = []
    for event in step_failures:
        err = event.step_failure_data.error
        while err is not None and err.cause is not None:
            err = err.cause
        lines = (err.message if err else "failed").strip().splitlines()
        reasons.append(f"{event.step_key}: {lines[-1] if lines else 'failed'}")
    return "; ".join(reasons) or fallback


def record_success(home: Path, run_id: str) -> None:
    """The run published a new serving copy."""
    write_status(home, True, run_id, "published")


def record_failure(home: Path, run_id: str, reason: str) -> None:
    """The run failed; the previous publication (if any) stays in place."""
    write_status(home, False, run_id, reason)


def record_result(home: Path, result: dg.ExecuteInProcessResult) -> tuple[bool, str]:
    """Record an in-process run's outcome; returns (published, failure reason)."""
    events = result.all_events
    published = any(e.event_type_value == "ASSET_MATERIALIZATION" and e.asset_key == PUBLICATION_KEY
                    for e in events)
    if result.success and published:
        record_success(home, result.run_id)
        return True, ""
    reason = failure_reason((e for e in events if e.event_type_value == "STEP_FAILURE"),
                            fallback="a blocking check failed before publication")
    record_failure(home, result.run_id, reason)
    return False, reason
