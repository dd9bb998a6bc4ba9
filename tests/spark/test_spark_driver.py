"""The Spark driver JVM ends with the dbt command that started it: on a normal exit and on SIGTERM of
the caller (pipelines/dbt_entry.py `stop_spark`). `dbt debug --target spark` opens the session (one
JVM start, `select 1`), no build."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from pipelines.dbt_server import ENV_VAR
from tests.conftest import REPO
from warehouse.home import DBT_DIR

pytestmark = pytest.mark.spark

GPU_LEDGER_DBT = REPO / ".venv" / "bin" / "gpu-ledger-dbt"


def _spark_processes(folder: Path) -> set[int]:
    """Live processes working in `folder` whose command is Spark's launcher (spark-submit, the JVM)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "cwd") == str(folder) and b"SparkSubmit" in (entry / "cmdline").read_bytes():
                    found.add(int(entry.name))
            except OSError:
                continue
    return found


def _alive(pid: int) -> bool:
    """Running (a zombie holds no memory and runs nothing)."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _is_driver(pid: int) -> bool:
    try:
        return os.readlink(f"/proc/{pid}/exe").endswith("java") and b"launcher.Main" not in Path(
            f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _debug(folder: Path, log: Path) -> subprocess.Popen:
    # dbt in the caller itself, as `gpu-ledger-dbt` runs it with no warm process to hand it to: there
    # the JVM outlived dbt before (the forked server child's exit closed the JVM's stdin early enough).
    env = {**{k: v for k, v in os.environ.items() if k != ENV_VAR}, "DBT_PROJECT_DIR": str(DBT_DIR), "DBT_PROFILES_DIR": str(DBT_DIR),
           "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    return subprocess.Popen([str(GPU_LEDGER_DBT), "--in", str(folder), "debug", "--target", "spark"], env=env,
                            stdout=log.open("wb"), stderr=subprocess.STDOUT)  # not a pipe: the JVM holds it too


@pytest.mark.parametrize("end", ["exit", "sigterm"])
def test_no_spark_driver_outlives_its_dbt(tmp_path: Path, end: str) -> None:
    """Before the fix the JVM was still running (state S) when the caller had ended, for ~2 s."""
    log = tmp_path.parent / f"{tmp_path.name}.log"
    caller, seen, jvm = _debug(tmp_path, log), set(), False
    deadline = time.monotonic() + 300
    while caller.poll() is None and time.monotonic() < deadline:
        now = _spark_processes(tmp_path)
        seen |= now
        # The JVM itself (spark-submit execs it; not its launcher, a short java run before it).
        jvm = jvm or any(_is_driver(pid) for pid in now)
        # SIGTERM once the SparkContext is up (its log line): dbt then has the session open.
        if end == "sigterm" and jvm and "Setting Spark log level" in log.read_text(errors="replace"):
            caller.send_signal(signal.SIGTERM)
            break
        time.sleep(0.05)
    caller.wait(timeout=300)
    running = [pid for pid in seen if _alive(pid)]  # at once: the JVM that outlived dbt exited ~2 s later
    out = log.read_text(errors="replace")
    assert jvm, out  # the command did start a Spark driver
    if end == "exit":
        assert caller.returncode == 0 and "OK connection ok" in out, out
    else:
        assert caller.returncode == -signal.SIGTERM, out
    assert running == [], (seen, running)
