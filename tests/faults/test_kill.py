"""Fault tests: `gpu-ledger run` killed with SIGKILL never damages the publication.

One module-scoped sequence on one home and one small inputs folder (registry + the FOCUS
sample + invoice_totals.csv). It starts from a copy of the session's shared first refresh of exactly
those inputs on a fresh home (`focus_home`, tests/conftest.py, also used by tests/pipeline/test_e2e.py);
every run after that is a real `gpu-ledger run` subprocess in its own process group (so SIGKILL
reaches the dbt child too):

  1. the shared first refresh, copied          -> publication A
  2. run, SIGKILL while `dbt build` runs      -> serving.duckdb must still be A, byte for byte
  3. run over what 2 left (its WAL and lock), SIGKILL while paused before the publish rename
     (tests/faults/paused_run.py patches the pause into warehouse/publish.py in the test's own
     process): it got through dbt build and the checks to the pause, and serving.duckdb is still
     A, byte for byte
  4. run to completion while a dashboard-like reader thread opens serving.duckdb read-only,
     counts fct_chargeback_monthly and closes, in a loop: it must never see an error
A and the result of 4 are completed runs on the same inputs, with two killed runs between them:
their published marts must be identical.

(A full run used to sit between 2 and 3, as the reference for 3. Run 3 reaching the publish
pause proves the same recovery, and the suite is CPU-bound: one CLI refresh is ~45 CPU s.)
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import duckdb
import pytest

from pipelines.outcome import attempt_state
from tests import prefetch
from tests.conftest import REPO, copy_home, descendants, published_tables
from warehouse.status import read_status

pytestmark = pytest.mark.e2e

GPU_LEDGER = REPO / ".venv" / "bin" / "gpu-ledger"
RUN_TIMEOUT = 600


def _start(inputs: Path, home: Path, pause_before_rename: float = 0) -> subprocess.Popen:
    cli = ([str(REPO / ".venv" / "bin" / "python"), "-m", "tests.faults.paused_run", str(pause_before_rename)]
           if pause_before_rename else [str(GPU_LEDGER)])
    # --full-refresh: the inputs are those of the completed run, which a plain refresh would skip
    # ("no new data") before dbt or the publication could be killed.
    return subprocess.Popen(
        [*cli, "run", "--no-docs", "--full-refresh", "--inputs", str(inputs), "--home", str(home)],
        cwd=REPO, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )


def _run(inputs: Path, home: Path) -> str:
    proc = _start(inputs, home)
    out, _ = proc.communicate(timeout=RUN_TIMEOUT)
    assert proc.returncode == 0, out[-3000:]
    return out


def _kill_when(proc: subprocess.Popen, ready, what: str) -> None:
    """SIGKILL the run's whole process group as soon as `ready()` is true."""
    deadline = time.monotonic() + RUN_TIMEOUT
    while not ready():
        if proc.poll() is not None:
            raise AssertionError(f"run ended (rc {proc.returncode}) before {what}: {proc.stdout.read()[-3000:]}")
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL


def _publish_copies(home: Path) -> set[str]:
    """The publisher's unrenamed copies in the home (`.serving.duckdb.<pid>.tmp`, warehouse/publish.py)."""
    return {p.name for p in home.glob(".serving.duckdb.*.tmp")}


def _opens_read_only(serving: Path) -> int:
    con = duckdb.connect(str(serving), read_only=True)
    try:
        return con.execute("select count(*) from fct_chargeback_monthly").fetchone()[0]
    finally:
        con.close()


def build_kill_sequence(root: Path, focus_home: dict) -> dict:
    """The whole sequence (a tests/prefetch.py job); `focus_home` is the shared first refresh."""
    assert focus_home["ok"], focus_home["reason"]
    inputs = focus_home["inputs"]  # registry + FOCUS sample + invoice_totals.csv (build_focus_home)
    home = copy_home(focus_home["home"], root / "home")  # 1: a completed run on these inputs
    serving = home / "serving.duckdb"
    seen: dict = {}

    seen["A"] = published_tables(serving)
    good = serving.read_bytes()

    proc = _start(inputs, home)  # 2: killed during dbt build
    _kill_when(proc, lambda: any("dbt" in c and " build" in c for _, c in descendants(proc.pid)), "dbt build")
    seen["after_dbt_kill"] = (serving.read_bytes() == good, _opens_read_only(serving))
    seen["leftovers_dbt_kill"] = sorted(p.name for p in home.iterdir())
    seen["state_after_dbt_kill"] = attempt_state(read_status(home))

    # 3: over whatever the killed writer left, through dbt build and the checks; killed before the rename
    proc = _start(inputs, home, pause_before_rename=120)
    log = home / "logs" / "last_run.log"
    _kill_when(proc, lambda: log.exists() and "test hook:" in log.read_text(errors="replace"), "the publish pause")
    seen["after_publish_kill"] = (serving.read_bytes() == good, _opens_read_only(serving))
    seen["leftovers_publish_kill"] = sorted(p.name for p in home.iterdir())

    errors: list[str] = []
    reads = [0, 0]  # all reads, reads from the moment the publisher started its new copy
    stop = threading.Event()
    stale = _publish_copies(home)  # run 3's unrenamed copy, which run 4 clears when it publishes

    def reader() -> None:  # a dashboard: open read-only, query, close, again
        publishing = False
        while not stop.is_set():
            try:
                _opens_read_only(serving)
                reads[0] += 1
                reads[1] += publishing
            except Exception as exc:  # noqa: BLE001 - any failure is what this test counts
                errors.append(repr(exc))
            # An open costs ~30 ms of CPU and serving.duckdb only changes when the run publishes (a new
            # copy written beside it, then renamed over it): 4 reads a second until that copy appears
            # (or the stale one goes), then one every 20 ms through the swap to the end of the run. A
            # 20 ms loop throughout kept ~60 % of a core busy for the whole refresh.
            publishing = publishing or _publish_copies(home) != stale
            time.sleep(0.02 if publishing else 0.25)

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    try:
        _run(inputs, home)  # 4: the dashboard keeps reading through the refresh and the swap
    finally:
        stop.set()
        thread.join(timeout=30)
    seen["B"] = published_tables(serving)
    seen["reader"] = (*reads, errors)
    seen["leftovers_final"] = sorted(p.name for p in home.iterdir())
    return seen


@pytest.fixture(scope="module")
def kill_sequence(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("kill_sequence", tmp_path_factory)


def test_kill_during_dbt_build_keeps_the_publication(kill_sequence: dict) -> None:
    identical, rows = kill_sequence["after_dbt_kill"]
    assert identical and rows > 0


def test_kill_before_publish_rename_keeps_the_publication(kill_sequence: dict) -> None:
    identical, rows = kill_sequence["after_publish_kill"]
    assert identical and rows > 0
    # The kill hit the intended window: the complete new copy was written but never renamed.
    assert any(n.startswith(".serving.duckdb.") and n.endswith(".tmp") for n in kill_sequence["leftovers_publish_kill"])


def test_a_killed_refresh_is_reported_as_interrupted(kill_sequence: dict) -> None:
    """`gpu-ledger status` must not present the previous success as the latest word after a SIGKILL."""
    assert kill_sequence["state_after_dbt_kill"] == "interrupted"


def test_no_stale_files_after_the_next_run(kill_sequence: dict) -> None:
    """The temp copy the killed publisher left behind is gone after the next good run."""
    assert not [n for n in kill_sequence["leftovers_final"] if n.endswith(".tmp")], kill_sequence["leftovers_final"]


def test_dashboard_reader_never_sees_an_error(kill_sequence: dict) -> None:
    reads, while_publishing, errors = kill_sequence["reader"]
    assert errors == [] and reads > 10
    assert while_publishing >= 3  # the reads that matter: from the new copy's start through the rename


def test_completed_runs_around_two_kills_publish_identical_marts(kill_sequence: dict) -> None:
    a, b = kill_sequence["A"], kill_sequence["B"]
    assert a == b
    assert len(a["ledger_focus"]) == 1000
