"""The drop-folder sensor and the run-failure notifier, evaluated with Dagster's test contexts."""

import json
import os
import time
from pathlib import Path

import dagster as dg

from pipelines.defs.sensors import WEBHOOK_ENV, drop_folder_sensor, notify_failure, notify_run_failure
from warehouse.status import read_status
from pipelines.resources import LedgerResource


def _tick(inputs: Path, home: Path, cursor: str | None):
    context = dg.build_sensor_context(
        cursor=cursor, resources={"ledger": LedgerResource(home=str(home), inputs=str(inputs))})
    return drop_folder_sensor.evaluate_tick(context)


def _drop(path: Path, content: bytes, age_s: float = 120) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    then = time.time() - age_s
    os.utime(path, (then, then))


def test_drop_folder_sensor_requests_a_run_only_for_new_files(tmp_path) -> None:
    inputs, home = tmp_path / "inputs", tmp_path / "home"
    _drop(inputs / "billing" / "march.csv", b"a,b\n1,2\n")

    baseline = _tick(inputs, home, None)
    assert not baseline.run_requests and baseline.cursor

    unchanged = _tick(inputs, home, baseline.cursor)
    assert not unchanged.run_requests and unchanged.cursor in (None, baseline.cursor)

    _drop(inputs / "prices" / "quote.yaml", b"quotes: []\n")
    _drop(inputs / "billing" / ".partial.csv", b"hidden files are ignored")
    added = _tick(inputs, home, baseline.cursor)
    assert len(added.run_requests) == 1 and added.cursor != baseline.cursor
    assert added.run_requests[0].run_key

    again = _tick(inputs, home, added.cursor)
    assert not again.run_requests

    # A file still being written (modified seconds ago) waits for the next tick.
    _drop(inputs / "usage" / "dcgm.csv", b"x", age_s=0)
    settling = _tick(inputs, home, added.cursor)
    assert not settling.run_requests and settling.cursor in (None, added.cursor)


def test_drop_folder_sensor_is_registered_for_the_nightly_job() -> None:
    assert drop_folder_sensor.job_name == "nightly"
    assert drop_folder_sensor.minimum_interval_seconds == 60


def _failed_run(instance: dg.DagsterInstance) -> dg.ExecuteInProcessResult:
    @dg.op
    def load_billing() -> None:
        raise ValueError("billing.csv:7: BilledCost is not a number")

    @dg.job(name="nightly")
    def broken() -> None:
        load_billing()

    return broken.execute_in_process(instance=instance, raise_on_error=False)


def test_run_failure_sensor_writes_status_and_posts_the_reason(httpserver, tmp_path, monkeypatch) -> None:
    home = tmp_path / "home"
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    monkeypatch.setenv(WEBHOOK_ENV, httpserver.url_for("/hook"))
    with dg.DagsterInstance.ephemeral() as instance:
        result = _failed_run(instance)
        context = dg.build_run_status_sensor_context(
            sensor_name="notify_run_failure", dagster_instance=instance, dagster_run=result.dagster_run,
            dagster_event=result.get_run_failure_event(), resources={"ledger": LedgerResource(home=str(home))},
        ).for_run_failure()
        notify_run_failure(context)

    (request, _), = httpserver.log
    posted = json.loads(request.data)
    assert posted["job"] == "nightly" and posted["run_id"] == result.run_id
    assert "load_billing: ValueError: billing.csv:7: BilledCost is not a number" in posted["reason"]
    status = read_status(home)
    assert status["ok"] is False and status["run_id"] == result.run_id and status["message"] == posted["reason"]


def test_webhook_failure_is_logged_not_raised(httpserver, tmp_path, caplog) -> None:
    httpserver.expect_request("/hook/secret-token", method="POST").respond_with_data("down", status=500)
    posted = notify_failure(tmp_path, "nightly", "run-1", "raw/billing: boom", httpserver.url_for("/hook/secret-token"))
    assert posted is False
    assert read_status(tmp_path)["message"] == "raw/billing: boom"
    ours = "\n".join(r.getMessage() for r in caplog.records if r.name == "pipelines.defs.sensors")
    assert "not notified" in ours and "HTTP 500" in ours and "secret-token" not in ours
    assert notify_failure(tmp_path, "nightly", "run-2", "x", None) is False  # no webhook: status only
    assert read_status(tmp_path)["run_id"] == "run-2"
