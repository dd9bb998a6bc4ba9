"""How a nightly run ended, written to HOME/last_refresh.json: the status file's one writer.

An in-process run (`gpu-ledger run`) records its outcome from the CLI; a run the Dagster daemon
launched is recorded by the run-status sensors in `defs/sensors.py`. Both come through here, so
the success and failure records have one shape and one author.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from warehouse.home import Home
from warehouse.status import now_utc, read_status, write_attempt, write_status

if TYPE_CHECKING:  # Dagster is imported by the runs it records, not by a refresh that ends with no new data
    import dagster as dg

    from pipelines.refresh_state import Plan

PUBLICATION_PATH = ["serving", "publication"]
# Kept from the refresh that last built and published, through the no-new-data refreshes after it.
BUILT_KEYS = ("built_from", "built_run_id", "built_at")


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


def lock_refusal(events: Iterable[Any]) -> str | None:
    """The refresh lock's refusal (warehouse/refresh_lock.py `RefreshBusy`) that stopped a run at
    resource initialisation, as its message; None when the run was not refused. Such a run touched
    nothing: the refresh holding the lock owns the home and its status file."""
    for entry in events:
        event = getattr(entry, "dagster_event", entry)
        err = getattr(getattr(event, "event_specific_data", None), "error", None)
        while err is not None:
            if err.cls_name == "RefreshBusy":
                return err.message.strip().splitlines()[-1].removeprefix("warehouse.refresh_lock.RefreshBusy: ")
            err = err.cause
    return None


def record_start(home: Path, log_path: Path) -> None:
    """An in-process refresh starts (this process, this log)."""
    # Relative to the home, so a copied or moved home still names its own log.
    log = log_path.relative_to(home) if log_path.is_relative_to(home) else log_path
    write_attempt(home, {"state": "running", "pid": os.getpid(), "started_at": now_utc(), "log": str(log)})


def _finish_attempt(home: Path, run_id: str, state: str, attempt: dict | None) -> dict:
    if not attempt or attempt.get("pid") != os.getpid():  # a daemon run: no attempt was recorded
        attempt = {"started_at": None, "log": None}
    return {"attempt": {**attempt, "state": state, "run_id": run_id, "finished_at": now_utc()}}


def record_success(home: Path, run_id: str, profile: dict | None = None, built_from: dict | None = None) -> None:
    """The run published a new serving copy (`profile`: seconds per stage, pipelines/profile.py;
    `built_from`: the inputs and code it started from, pipelines/refresh_state.py)."""
    attempt = (read_status(home) or {}).get("attempt")
    extra = _finish_attempt(home, run_id, "finished", attempt)
    if built_from is not None:
        extra.update(built_from=built_from, built_run_id=run_id, built_at=now_utc())
    write_status(home, True, run_id, "published", {**extra, **({"profile": profile} if profile else {})})


def no_new_data_message(status: dict[str, Any]) -> str:
    """'no new data since run <id> (<time>) ...': what `status` and `run` print after such a refresh."""
    return (f"no new data since run {status.get('built_run_id')} ({status.get('built_at')}): nothing rebuilt, "
            "the publication stays as it was")


def record_no_new_data(home: Path, last: dict[str, Any], seconds: float) -> str:
    """A refresh found the inputs and code the last build started from: nothing was rebuilt or
    published. The record of that build is kept; returns the message written."""
    kept = {k: last[k] for k in BUILT_KEYS if k in last}
    message = no_new_data_message(kept)
    attempt = {"state": "finished", "pid": os.getpid(), "started_at": None, "log": None,
               "run_id": None, "finished_at": now_utc(), "no_new_data": True}
    write_status(home, True, str(last.get("built_run_id") or last.get("run_id")), message,
                 {**kept, "no_new_data": True, "attempt": attempt,
                  "profile": {"stages_s": {"no-new-data check": round(seconds, 2)}, "total_s": round(seconds, 2)}})
    return message


def early_outcome(home: Path, plan: Plan) -> tuple[bool, str, str] | None:
    """The result of a refresh that ends at its plan (pipelines/refresh_state.py), before any run: no new data
    (the last build's run id, recorded as such), or a landing folder that could not be written (recorded as a
    failure without a run, when the disk still takes the status file). None: the refresh runs."""
    if plan.failure:
        with contextlib.suppress(OSError):  # the same full disk may refuse the status file as well
            record_failure(home, "", plan.failure)
        return False, "", plan.failure
    if plan.skip:
        record_no_new_data(home, plan.last, plan.seconds)
        return True, str(plan.last.get("built_run_id") or plan.last.get("run_id")), ""
    return None


def record_failure(home: Path, run_id: str, reason: str, profile: dict | None = None) -> None:
    """The run failed; the previous publication (if any) stays in place."""
    attempt = (read_status(home) or {}).get("attempt")
    extra = _finish_attempt(home, run_id, "failed", attempt)
    write_status(home, False, run_id, reason, {**extra, **({"profile": profile} if profile else {})})


def attempt_state(status: dict | None) -> str:
    """'running', 'interrupted' (its process is gone without a word), 'finished', 'failed' or 'none'."""
    attempt = (status or {}).get("attempt")
    if not attempt:
        return "none"
    if attempt.get("state") != "running":
        return str(attempt.get("state"))
    try:
        os.kill(int(attempt["pid"]), 0)
    except ProcessLookupError:
        return "interrupted"
    except (PermissionError, KeyError, TypeError, ValueError):
        pass
    return "running"


def record_result(home: Path, result: dg.ExecuteInProcessResult, profile: dict | None = None,
                  built_from: dict | None = None) -> tuple[bool, str]:
    """Record an in-process run's outcome (with its stage profile and the state it built from);
    returns (published, failure reason)."""
    events = result.all_events
    published = any(e.event_type_value == "ASSET_MATERIALIZATION" and e.asset_key is not None
                    and list(e.asset_key.path) == PUBLICATION_PATH for e in events)
    if result.success and published:
        record_success(home, result.run_id, profile, built_from)
        return True, ""
    reason = failure_reason((e for e in events if e.event_type_value == "STEP_FAILURE"),
                            fallback="a blocking check failed before publication")
    record_failure(home, result.run_id, reason, profile)
    return False, reason


def new_run_log(paths: Home) -> Path:
    """HOME/logs/run-<UTC time>-<pid>.log for this run; HOME/logs/last_run.log points at it."""
    paths.logs.mkdir(exist_ok=True)
    log_path = paths.logs / f"run-{datetime.now(UTC):%Y%m%dT%H%M%S.%fZ}-{os.getpid()}.log"
    log_path.touch()
    link = paths.run_log.with_name(f".{paths.run_log.name}.{os.getpid()}")
    link.unlink(missing_ok=True)
    link.symlink_to(log_path.name)
    link.replace(paths.run_log)  # atomic: a reader sees the previous run's log or this one's
    return log_path
