"""Two refreshes of one home, and a publish over a killed one's leftovers.

Two `gpu-ledger run` of one home at once both died with DuckDB's raw "Could not set lock" error. Now
(warehouse/refresh_lock.py) the second stops before touching the home, with a message naming the
running one and exit code 3; a lock left by a dead process is taken over. A publish killed after
DuckDB wrote `.serving.duckdb.<pid>.tmp.wal` left it forever; publish now removes its own and dead
processes' temp files before writing.

The end-to-end part runs on a copy of the session's shared first refresh (`focus_home`,
tests/conftest.py) with hostile inputs added, so the same refresh also shows that refused inputs,
alias bombs and credentials in names and labels come out as rejects and hashes, never as errors
(a tests/prefetch.py job: the first `gpu-ledger run` in the job's process, the second a process of its own).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from pipelines.outcome import lock_refusal
from sources.secrets import redact
from tests import prefetch
from tests.conftest import REPO, SAMPLES, copy_home
from tests.security.test_credential_shapes import JWT, NAME_TOKEN, URL
from tests.security.test_yaml_aliases import _bomb
from warehouse.publish import publish
from warehouse.refresh_lock import LOCK_NAME, RefreshBusy, read_holder, refresh_lock
from warehouse.status import read_status

GPU_LEDGER = REPO / ".venv" / "bin" / "gpu-ledger"
DEAD_PID = 4_194_305  # above Linux's largest pid_max: never a running process
HOLDER = """
import sys, time
from pathlib import Path
from warehouse.refresh_lock import refresh_lock
with refresh_lock(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(300)
"""


def test_two_threads_one_lock(tmp_path: Path) -> None:
    results: list[str] = []
    barrier = threading.Barrier(2)

    def refresh() -> None:
        barrier.wait()
        try:
            with refresh_lock(tmp_path):
                results.append("ran")
                time.sleep(0.5)
        except RefreshBusy as exc:
            results.append(str(exc))

    threads = [threading.Thread(target=refresh) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    busy, ran = sorted(results)
    assert ran == "ran" and busy.startswith(f"another refresh of {tmp_path} is running since ")
    assert f"pid {os.getpid()}" in busy


def test_a_lock_left_by_a_dead_pid_is_taken_over(tmp_path: Path) -> None:
    (tmp_path / LOCK_NAME).write_text(json.dumps({"pid": DEAD_PID, "started_at": "2026-01-01T00:00:00Z"}))
    with refresh_lock(tmp_path) as me:
        assert me["pid"] == os.getpid() and read_holder(tmp_path)["pid"] == os.getpid()
    assert read_holder(tmp_path) == {}


def test_a_killed_holder_releases_the_lock_and_a_waiter_gives_up_at_its_bound(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], cwd=REPO, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        began = time.monotonic()
        with pytest.raises(RefreshBusy, match=f"pid {holder.pid}"), refresh_lock(tmp_path, wait_s=1.0):
            pass
        assert 1.0 <= time.monotonic() - began < 5
    finally:
        holder.kill()
        holder.wait(10)
    assert read_holder(tmp_path)["pid"] == holder.pid  # killed: its pid is left in the file ...
    with refresh_lock(tmp_path) as me:  # ... and the lock is free all the same
        assert me["pid"] == os.getpid()


def _hostile_inputs(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    usage = dest / "usage"
    usage.mkdir()
    shutil.copy(SAMPLES / "usage" / "datadog_dcgm_fixture_label_remap.prom", usage / f"dcgm-{NAME_TOKEN}.prom")
    (usage / "node9.prom").symlink_to("/etc/passwd")
    (usage / "..\\..\\x.prom").write_text("x 1\n")
    (dest / "registry" / "bomb.yaml").write_text(_bomb(9))
    doc = json.loads((SAMPLES / "usage" / "opencost_allocation_compute_response_example.json").read_text())
    next(iter(doc["data"][0].values()))["properties"]["labels"] = {"app": "vllm", "session": JWT, "dsn": URL}
    (usage / "opencost_labels.json").write_text(json.dumps(doc))
    return dest


def _cli(*args: str) -> list[str]:
    return [str(GPU_LEDGER), *args]


def build_two_refreshes(root: Path, focus_home: dict) -> dict:
    """`gpu-ledger run` of a copy of `focus_home` with hostile inputs added, and while it holds the home a
    second `gpu-ledger run --wait 1` of the same home, in a process of its own (a tests/prefetch.py job).

    The first is the CLI's own `run` command in this process (typer's CliRunner: the same command, its
    output captured), where the pipeline is imported already: a fresh CLI process would import it again
    (~8 CPU s). The second starts as soon as the first holds the lock."""
    from typer.testing import CliRunner

    from pipelines.cli import app

    assert focus_home["ok"], focus_home["reason"]
    home = copy_home(focus_home["home"], root / "home")
    inputs = _hostile_inputs(focus_home["inputs"], root / "inputs")
    run = ["run", "--no-docs", "--inputs", str(inputs), "--home", str(home)]
    env = {**os.environ, "COLUMNS": "400"}
    second: dict = {}

    def refused() -> None:
        while read_holder(home).get("pid") != os.getpid():
            if "done" in second:
                return
            time.sleep(0.05)
        began = time.monotonic()
        done = subprocess.run(_cli(*run, "--wait", "1"), cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=300, check=False)
        second["run"] = (done.returncode, done.stdout + done.stderr, time.monotonic() - began)

    waiter = threading.Thread(target=refused)
    waiter.start()
    try:
        first = CliRunner().invoke(app, run, env={"COLUMNS": "400"})
    finally:
        second["done"] = True
        waiter.join(timeout=300)
    out = first.output
    if first.exception is not None and not isinstance(first.exception, SystemExit):
        out += "".join(traceback.format_exception(first.exception))
    assert "run" in second, f"the second refresh never ran while the first held the lock:\n{out[-3000:]}"
    return {"home": home, "first": (first.exit_code, out, os.getpid()), "second": second["run"]}


@pytest.fixture(scope="module")
def two_refreshes(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("refresh_lock", tmp_path_factory)


def test_the_second_refresh_names_the_first_and_exits_3(two_refreshes: dict) -> None:
    code, out, seconds = two_refreshes["second"]
    home, pid = two_refreshes["home"], two_refreshes["first"][2]
    assert code == 3, out
    assert f"another refresh of {home} is running since " in out and f"pid {pid}" in out
    assert "Traceback" not in out and "Could not set lock" not in out and seconds < 60


def test_the_first_refresh_publishes(two_refreshes: dict) -> None:
    code, out, _ = two_refreshes["first"]
    assert code == 0, out[-3000:]


def test_refused_inputs_are_in_the_summary_and_rejects(two_refreshes: dict) -> None:
    home, (_, out, _) = two_refreshes["home"], two_refreshes["first"]
    for name in ("node9.prom", "..\\..\\x.prom", "bomb.yaml"):
        assert f"quarantined file {name}" in out, out[-3000:]
    listed = subprocess.run(_cli("rejects", "--home", str(home)), cwd=REPO, capture_output=True, text=True,
                            env={**os.environ, "COLUMNS": "400"}, timeout=120, check=False).stdout
    assert "symbolic link to a path outside the inputs folder" in listed and "aliases are not accepted" in listed
    assert "root:x:0:0" not in "".join(p.read_text(errors="replace") for p in (home / "landing").rglob("*.prom"))


def test_credentials_in_names_and_labels_are_kept_only_as_hashes(two_refreshes: dict) -> None:
    home = two_refreshes["home"]
    for path in home.rglob("*"):  # the Dagster run history, logs, manifest, hash cache, databases
        if path.is_file() and not path.is_relative_to(home / "landing" / "usage"):
            data = path.read_bytes()
            assert b"PLANTED" not in data and b"admin:secret" not in data, path
    con = duckdb.connect(str(home / "serving.duckdb"), read_only=True)
    try:
        names = [r[0] for r in con.execute("select source_file from source_files").fetchall()]
        cols = con.execute("select table_name, column_name from information_schema.columns "
                           "where data_type = 'VARCHAR'").fetchall()
        hits = [(t, c) for t, c in cols
                if con.execute(f'select count(*) from "{t}" where "{c}" like \'%PLANTED%\'').fetchone()[0]]
    finally:
        con.close()
    assert f"dcgm-{redact(NAME_TOKEN)}.prom" in names and hits == []


def test_publish_removes_leftover_temp_files_first(two_refreshes: dict) -> None:
    home = two_refreshes["home"]
    serving = home / "serving.duckdb"
    stale = [home / f".serving.duckdb.{DEAD_PID}.tmp", home / f".serving.duckdb.{DEAD_PID}.tmp.wal",
             home / f".serving.duckdb.{os.getpid()}.tmp.wal"]  # the name this publish writes next
    for path in stale:
        path.write_bytes(b"left by a killed publish")
    run_id = read_status(home)["run_id"]
    counts = publish(home / "ledger.duckdb", serving, run_id, datetime.now(UTC))
    assert counts["source_files"] > 0
    assert not [p for p in stale if p.exists()]
    assert not list(home.glob(".serving.duckdb.*"))


def test_a_dagster_launched_run_is_refused_while_a_refresh_holds_the_home(tmp_path: Path) -> None:
    """The nightly schedule (or the UI, or the drop-folder sensor) runs the `nightly` job in the Dagster
    daemon's process, not through `gpu-ledger run`: its ledger-writing assets take the same lock."""
    import dagster as dg

    from pipelines.definitions import defs

    home = tmp_path / "home"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(home)], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with dg.DagsterInstance.ephemeral() as instance:
            result = defs.resolve_job_def("nightly").execute_in_process(
                instance=instance, raise_on_error=False,
                run_config={"resources": {"ledger": {"config": {"home": str(home), "inputs": str(SAMPLES)}}}})
    finally:
        holder.kill()
        holder.wait()
    assert not result.success
    refused = lock_refusal(result.all_events)  # what the run-failure sensor reads (pipelines/defs/sensors.py)
    assert refused is not None and refused.startswith(f"another refresh of {home} is running since"), refused
    assert f"pid {holder.pid} " in refused
    # Refused before anything of the home was touched: nothing landed, no ledger opened.
    assert not (home / "landing").exists() and not (home / "ledger.duckdb").exists()
    assert sorted(p.name for p in home.iterdir()) == [LOCK_NAME]
