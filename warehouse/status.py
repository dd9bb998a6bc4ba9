"""The outcome of the last refresh (HOME/last_refresh.json): one writer, one reader.

Written by `pipelines/outcome.py` only (after an in-process run, or by the run-status sensors for
runs the Dagster daemon launched); read by the dashboard banner and `gpu-ledger status`. Written
to a temporary file and renamed, so a reader never sees half a file.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from warehouse.home import Home


def now_utc() -> str:
    """The current UTC time as the status file writes it."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_status(home: Path, ok: bool, run_id: str, message: str, extra: dict[str, Any] | None = None) -> None:
    """Record the outcome of the latest refresh (atomically replaces the file)."""
    status = {"ok": ok, "run_id": run_id, "message": message, "finished_at": now_utc(), **(extra or {})}
    target = Home(home).status_file
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(json.dumps(status, indent=2))
    os.replace(tmp, target)


def write_attempt(home: Path, attempt: dict[str, Any]) -> None:
    """Record the refresh being attempted now (state running / finished / failed) beside the last
    outcome, so a refresh killed midway is visible as one that started and never finished."""
    status = read_status(home) or {}
    status["attempt"] = attempt
    target = Home(home).status_file
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(json.dumps(status, indent=2))
    os.replace(tmp, target)


def read_status(home: Path) -> dict[str, Any] | None:
    """The last refresh outcome, or None when no refresh has run (or the file is unreadable)."""
    path = Home(home).status_file
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
