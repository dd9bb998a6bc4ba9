"""The command line as a new user meets it: wrong usage gets one clear line and a non-zero exit,
unknown names list the valid ones, `status` tells an interrupted refresh from a finished one, and
a run reports each stage as it goes."""

from __future__ import annotations

import io
import logging
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from pipelines.cli import app
from pipelines.outcome import attempt_state, record_start
from pipelines.progress import ProgressHandler, stage_name
from tests.dashboards.serving_fixture import build_serving
from warehouse.status import read_status, write_attempt

runner = CliRunner()


@pytest.fixture()
def published(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    build_serving(home)
    return home


def _run(*args: str):
    return runner.invoke(app, list(args))


def test_a_home_that_is_a_file_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    result = _run("status", "--home", str(a_file))
    assert result.exit_code == 2
    assert "exists and is not a folder" in result.output and "Traceback" not in result.output


def test_report_month_must_be_a_month(published: Path) -> None:
    result = _run("report", "--home", str(published), "--month", "2025-13")
    assert result.exit_code == 2
    assert "expected a month as YYYY-MM" in result.output and "Traceback" not in result.output


def test_report_unknown_team_lists_the_teams(published: Path) -> None:
    result = _run("report", "--home", str(published), "--team", "nobody")
    assert result.exit_code == 1
    assert "no such team" in result.output and "ml-research" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_decide_unknown_workload_lists_the_workloads(published: Path) -> None:
    result = _run("decide", "--home", str(published), "--workload", "nope")
    assert result.exit_code == 1
    assert "no such workload" in result.output and "wl-serve" in result.output


def test_rejects_unknown_source_lists_the_families(tmp_path: Path) -> None:
    result = _run("rejects", "--home", str(tmp_path), "--source", "bogus")
    assert result.exit_code == 2
    assert "expected one of" in result.output and "billing" in result.output


def test_commands_on_an_empty_home_say_what_to_do(tmp_path: Path) -> None:
    for args in (("report",), ("decide", "--workload", "x"), ("rejects",)):
        result = _run(*args, "--home", str(tmp_path / "empty"))
        assert result.exit_code == 1, args
        assert "gpu-ledger run" in result.output, args


def test_status_reports_an_interrupted_refresh(published: Path) -> None:
    # A refresh recorded as started by a process that is gone (killed): not "ok", not "running".
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    write_attempt(published, {"state": "running", "pid": gone.pid, "started_at": "2025-03-01T02:00:00Z",
                              "log": "logs/run-x.log"})
    assert attempt_state(read_status(published)) == "interrupted"
    result = _run("status", "--home", str(published))
    assert "INTERRUPTED" in result.output and "2025-03-01T02:00:00Z" in result.output
    # The last finished refresh is still reported, separately.
    assert "last finished refresh" in result.output


def test_a_running_refresh_is_running(tmp_path: Path) -> None:
    record_start(tmp_path, tmp_path / "run.log")  # this process: alive
    assert attempt_state(read_status(tmp_path)) == "running"


def _event(kind: str, step: str) -> logging.LogRecord:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "", None, None)
    record.dagster_meta = {"dagster_event": SimpleNamespace(event_type_value=kind, step_key=step)}
    return record


def test_progress_prints_one_line_per_stage_and_counts_dbt_models() -> None:
    out = io.StringIO()
    handler = ProgressHandler(dbt_models=20, out=out)
    for kind, step in [("STEP_START", "raw__billing"), ("STEP_SUCCESS", "raw__billing"),
                       ("STEP_START", "ledger_dbt_assets"), *[("ASSET_MATERIALIZATION", "ledger_dbt_assets")] * 20,
                       ("STEP_FAILURE", "serving__publication"), ("STEP_OUTPUT", "serving__publication")]:
        handler.emit(_event(kind, step))
    lines = [line.split("] ", 1)[1] for line in out.getvalue().splitlines()]
    # 20 models at one line per 10: two count lines; STEP_OUTPUT prints nothing.
    assert lines == ["parse + load billing ...", "parse + load billing: done", "dbt build ...",
                     "dbt build 10/20 models", "dbt build 20/20 models", "publish: FAILED (details in the run log)"]
    assert stage_name("gx_suites") == "great-expectations suites"


def test_rejects_lists_the_quarantined_rows(tmp_path: Path) -> None:
    """`gpu-ledger rejects` prints audit.dq_rejects (it raised NameError before: `Table` was not imported)."""
    import duckdb

    from warehouse.home import Home

    home = Home(tmp_path / "home").ensure()
    con = duckdb.connect(str(home.ledger_db))
    con.execute("create schema audit")
    con.execute("create table audit.dq_rejects (source_family varchar, file_name varchar, line bigint, rule varchar,"
                " column_name varchar, value varchar, message varchar)")
    con.execute("insert into audit.dq_rejects values ('usage', 'dcgm.csv', 7, 'invalid_timestamp', 'timestamp',"
                " 'yesterday', 'not a timestamp'), ('prices', 'p.csv', 2, 'zero_price', 'price', '0', 'zero')")
    con.close()
    result = runner.invoke(app, ["rejects", "--home", str(home.root)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "2 rejects" in result.output and "invalid_timestamp" in result.output and "zero_price" in result.output
    only = runner.invoke(app, ["rejects", "--home", str(home.root), "--source", "usage"], env={"COLUMNS": "200"})
    assert "1 rejects" in only.output and "zero_price" not in only.output


def test_sigterm_still_stops_a_background_process_after_a_refresh() -> None:
    """Started in the background without job control, a process ignores SIGINT; Dagster maps SIGTERM to
    SIGINT's disposition when an execution ends, which left SIGTERM ignored for the rest of the process
    and every child it started (CI run 119). `execute_refresh` runs Dagster inside `sigterm_kept`."""
    import signal

    from dagster._utils.interrupts import capture_interrupts

    from pipelines.cli import sigterm_kept

    saved = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        with capture_interrupts():  # what an execution does to the handlers (the upstream behaviour)
            pass
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        with sigterm_kept(), capture_interrupts():
            pass
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        child.terminate()
        assert child.wait(timeout=30) == -signal.SIGTERM
    finally:
        signal.signal(signal.SIGINT, saved[0])
        signal.signal(signal.SIGTERM, saved[1])
