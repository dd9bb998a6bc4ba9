"""The warm dbt server (tests/dbt_server.py; the caller's side in pipelines/dbt_server.py):
`gpu-ledger-dbt` through it is the same dbt command, on the caller's folder, environment and streams,
with the same exit code; a caller that is killed takes its dbt with it; with no server listening,
`gpu-ledger-dbt` runs dbt itself."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipelines.dbt_entry import RUN_RESULTS_ONLY
from pipelines.dbt_server import ENV_VAR
from tests import dbt_server
from tests.conftest import REPO, descendants

GPU_LEDGER_DBT = REPO / ".venv" / "bin" / "gpu-ledger-dbt"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[subprocess.Popen, Path]]:
    sock = tmp_path_factory.mktemp("srv") / "dbt.sock"
    proc = dbt_server.start(sock)
    deadline = time.monotonic() + 60
    while not sock.exists():
        assert proc.poll() is None and time.monotonic() < deadline, "the server never listened"
        time.sleep(0.1)
    yield proc, sock
    proc.terminate()
    proc.wait(timeout=30)


def _env(sock: Path | str, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DBT_")}
    # HOME: `dbt init` (below) creates ~/.dbt; keep it in the test's folder.
    return {**env, ENV_VAR: str(sock), "HOME": str(home), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}


def _children(pid: int) -> set[int]:
    """The server's forked children: the processes below it with its own command line. A process a child
    starts in turn (multiprocessing's resource tracker, for one) is not one of them."""
    own = (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    return {child for child, cmd in descendants(pid) if cmd == own}


def _wait_for(cond, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _commands(sock: Path) -> int:
    return int(dbt_server.stats(sock).get("commands", 0))


def _killed_by(sock: Path, signum: int) -> int:
    return int(dbt_server.stats(sock).get("killed_by", {}).get(str(signum), 0))


def test_same_command_folder_environment_streams_and_exit_code(server, tmp_path: Path) -> None:
    proc, sock = server
    before = _commands(sock)
    profiles = tmp_path / "my_profiles"
    profiles.mkdir()
    # `--in DIR` and the caller's DBT_PROFILES_DIR reach the child: `dbt debug --config-dir` names the folder.
    ok = subprocess.run([str(GPU_LEDGER_DBT), "--in", str(tmp_path), "debug", "--config-dir"],
                        env={**_env(sock, tmp_path), "DBT_PROFILES_DIR": str(profiles)},
                        capture_output=True, text=True, timeout=120, check=False)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert str(profiles) in ok.stdout
    # dbt's own usage error: its exit code (2) and its message on the caller's stderr.
    bad = subprocess.run([str(GPU_LEDGER_DBT), "no-such-command"], env=_env(sock, tmp_path),
                         capture_output=True, text=True, timeout=120, check=False)
    assert bad.returncode == 2 and "No such command 'no-such-command'" in bad.stderr, bad.stderr
    # Both ran in the server's children, not in the callers.
    _wait_for(lambda: _commands(sock) == before + 2, "the server to count both commands", timeout=10)
    assert proc.poll() is None


@pytest.mark.parametrize("kill", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_caller_leaves_no_dbt_behind(server, tmp_path: Path, kill: signal.Signals) -> None:
    """`dbt init` waits on its stdin for a project name: a dbt command that is running when the kill
    comes. SIGKILL: the child sees its caller's socket close and kills itself (SIGKILL). SIGTERM: the
    caller passes it on, so the child ends by SIGTERM too, as a dbt process would."""
    proc, sock = server
    before = _children(proc.pid)
    killed_before = _killed_by(sock, kill)
    caller = subprocess.Popen([str(GPU_LEDGER_DBT), "--in", str(tmp_path), "init"], env=_env(sock, tmp_path),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    _wait_for(lambda: _children(proc.pid) - before, "the server's child")
    new = _children(proc.pid) - before
    assert len(new) == 1, [cmd for pid, cmd in descendants(proc.pid) if pid in new]
    (child,) = new
    # The child exists from the server's accept on, before the caller has sent its command: killed then,
    # the child ends on the half-sent request (exit 70), not as a running dbt. dbt's first line on the
    # caller's stdout (the child writes there) says the command runs.
    ready, _, _ = select.select([caller.stdout], [], [], 60)
    assert ready and os.read(caller.stdout.fileno(), 4096), "dbt init never started"
    caller.send_signal(kill)
    caller.wait(timeout=30)
    assert caller.returncode == -kill
    _wait_for(lambda: child not in _children(proc.pid), "the child to end")
    _wait_for(lambda: _killed_by(sock, kill) == killed_before + 1, f"the server to see its child end by {kill.name}",
              timeout=10)
    assert proc.poll() is None  # the server itself carries on


def test_without_a_server_dbt_runs_in_the_caller(tmp_path: Path) -> None:
    gone = tmp_path / "nothing-listens.sock"
    profiles = tmp_path / "my_profiles"
    out = subprocess.run([str(GPU_LEDGER_DBT), "--in", str(tmp_path), "debug", "--config-dir"],
                         env={**_env(gone, tmp_path), "DBT_PROFILES_DIR": str(profiles)},
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0 and str(profiles) in out.stdout, out.stdout + out.stderr
    assert not gone.exists()


def _tiny_project(root: Path) -> Path:
    """A one-model DuckDB project whose one data test fails (x is 1, the test accepts only 2)."""
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text("name: tiny\nversion: '1.0'\nprofile: tiny\nconfig-version: 2\n")
    (root / "profiles.yml").write_text(
        "tiny:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n      path: tiny.duckdb\n      threads: 1\n")
    (root / "models" / "m.sql").write_text("select 1 as x\n")
    (root / "models" / "m.yml").write_text(
        "models:\n  - name: m\n    columns:\n      - name: x\n        data_tests:\n"
        "          - accepted_values:\n              arguments:\n                values: [2]\n")
    return root


def test_run_results_only_writes_the_results_and_keeps_dbts_exit_codes(server, tmp_path: Path) -> None:
    """`--run-results-only` (the pipeline's build): dbt's run_results.json where dbt writes it, no
    manifest.json, and dbt's exit codes: 1 when a test fails, 2 on a usage error (here through the server)."""
    _, sock = server
    project = _tiny_project(tmp_path / "tiny")
    target = tmp_path / "target"
    build = subprocess.run(  # no server: the caller runs dbt itself, as `gpu-ledger run` does
        [str(GPU_LEDGER_DBT), "--in", str(project), RUN_RESULTS_ONLY, "build", "--project-dir", str(project),
         "--profiles-dir", str(project), "--target-path", str(target)],
        env=_env(tmp_path / "nothing-listens.sock", tmp_path), capture_output=True, text=True, timeout=300,
        check=False)
    assert build.returncode == 1, build.stdout[-3000:] + build.stderr[-3000:]
    results = {r["unique_id"].split(".")[0]: r["status"]
               for r in json.loads((target / "run_results.json").read_text())["results"]}
    assert results == {"model": "success", "test": "fail"}
    assert not (target / "manifest.json").exists()
    assert (target / "partial_parse.msgpack").exists()  # the next command still starts from this parse
    bad = subprocess.run([str(GPU_LEDGER_DBT), RUN_RESULTS_ONLY, "no-such-command"], env=_env(sock, tmp_path),
                         capture_output=True, text=True, timeout=120, check=False)
    assert bad.returncode == 2 and "no-such-command" in bad.stderr, bad.stdout + bad.stderr
