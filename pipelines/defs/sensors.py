"""Sensors: start the nightly job when files are dropped in the inputs folder; report failed runs.

`drop_folder_sensor` fingerprints every input file the landing asset would read (relative path,
size, mtime); a changed fingerprint requests one nightly run keyed by it. Its first evaluation
only records the baseline (files already there are the nightly schedule's business), and a
file modified in the last `SETTLE_S` seconds postpones the run: a copy still in progress is not
a new input yet. It is stopped by default: turning it on is a deliberate choice to run full
refreshes on drops.

`notify_run_failure` records why a nightly run failed in HOME/last_refresh.json (the dashboard
banner) and POSTs {job, run_id, reason} to GPU_LEDGER_WEBHOOK_URL when that is set at run time;
`record_run_success` records a successful one (both through pipelines/outcome.py, the one writer).
"""

import hashlib
import json
import logging
import os
import time
from pathlib import Path
from urllib.parse import urlsplit

import dagster as dg
import requests

from pipelines.defs.nightly import nightly_job
from pipelines.outcome import failure_reason, lock_refusal, record_failure, record_success
from pipelines.resources import LedgerResource
from sources.catalog import FAMILIES
from warehouse.landing import input_files

SETTLE_S = 30.0
WEBHOOK_ENV = "GPU_LEDGER_WEBHOOK_URL"


def inputs_fingerprint(inputs_dir: Path) -> tuple[str, int, float]:
    """(sha256 of the sorted (relative path, size, mtime_ns) list, file count, newest mtime)."""
    entries = []
    newest = 0.0
    for family in FAMILIES:
        for path in input_files(inputs_dir, family):
            st = path.stat()
            entries.append((str(path.relative_to(inputs_dir)), st.st_size, st.st_mtime_ns))
            newest = max(newest, st.st_mtime)
    digest = hashlib.sha256(json.dumps(sorted(entries)).encode()).hexdigest()
    return digest, len(entries), newest


@dg.sensor(name="drop_folder_sensor", job=nightly_job, minimum_interval_seconds=60,
           description="Starts the nightly job when files are added to or changed in the inputs folder.")
def drop_folder_sensor(context: dg.SensorEvaluationContext, ledger: LedgerResource):
    digest, count, newest = inputs_fingerprint(ledger.inputs_dir)
    if context.cursor is None:
        context.update_cursor(digest)
        return dg.SkipReason(f"baseline recorded: {count} files in {ledger.inputs_dir}")
    if digest == context.cursor:
        return dg.SkipReason(f"no new or changed files in {ledger.inputs_dir}")
    if time.time() - newest < SETTLE_S:
        return dg.SkipReason(f"a file changed less than {SETTLE_S:.0f} s ago; waiting for it to settle")
    context.update_cursor(digest)
    return dg.RunRequest(run_key=f"drop-{digest[:16]}", tags={"gpu_ledger/trigger": "drop_folder"})


def _webhook_host(url: str) -> str:
    """Scheme and host only: webhook paths often embed a token, which never goes to the log."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}"


def notify_failure(home: Path, job: str, run_id: str, reason: str, webhook_url: str | None,
                   log: logging.Logger | None = None) -> bool:
    """Write the failure to HOME/last_refresh.json, then POST it to the webhook if one is set.

    Returns whether a webhook accepted the post. A webhook that cannot be reached is logged,
    never raised: the status file is the record, the post a courtesy.
    """
    log = log or logging.getLogger(__name__)
    record_failure(home, run_id, reason)
    if not webhook_url:
        return False
    try:
        resp = requests.post(webhook_url, json={"job": job, "run_id": run_id, "reason": reason}, timeout=5)
        resp.raise_for_status()
    except requests.RequestException as exc:
        # The exception text holds the full URL (a token, perhaps): only its kind and status are logged.
        status = getattr(exc.response, "status_code", None)
        log.warning(f"failure webhook {_webhook_host(webhook_url)} not notified: {type(exc).__name__}"
                    + (f" (HTTP {status})" if status else ""))
        return False
    return True


@dg.run_failure_sensor(name="notify_run_failure", monitored_jobs=[nightly_job],
                       default_status=dg.DefaultSensorStatus.RUNNING,
                       description="Records why a nightly run failed (last_refresh.json) and posts it to a webhook.")
def notify_run_failure(context: dg.RunFailureSensorContext, ledger: LedgerResource) -> None:
    refused = lock_refusal(context.instance.all_logs(context.dagster_run.run_id,
                                                     of_type=dg.DagsterEventType.RESOURCE_INIT_FAILURE))
    if refused:  # another refresh holds the home: its outcome, not this refusal, is the home's status
        context.log.warning(f"nightly run {context.dagster_run.run_id} refused: {refused}")
        return
    reason = failure_reason(context.get_step_failure_events(), context.failure_event.message or "run failed")
    notify_failure(ledger.home_dir, context.dagster_run.job_name, context.dagster_run.run_id,
                   reason, os.environ.get(WEBHOOK_ENV), context.log)


@dg.run_status_sensor(name="record_run_success", run_status=dg.DagsterRunStatus.SUCCESS,
                      monitored_jobs=[nightly_job], default_status=dg.DefaultSensorStatus.RUNNING,
                      description="Records a successful nightly run in last_refresh.json.")
def record_run_success(context: dg.RunStatusSensorContext, ledger: LedgerResource) -> None:
    record_success(ledger.home_dir, context.dagster_run.run_id)


defs = dg.Definitions(sensors=[drop_folder_sensor, notify_run_failure, record_run_success])
