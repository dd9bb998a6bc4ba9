"""The test session's warm dbt server: imports dbt once, forks a child per dbt command.

`pipelines/dbt_server.py` is the caller's side (`gpu-ledger-dbt`) and says why. The test session
starts one server (tests/conftest.py) and names its socket in GPU_LEDGER_DBT_SERVER, so every
`gpu-ledger-dbt` the tests start (the pipeline's dbt build and docs in this process, the lane workers
and the CLI runs) runs in a child forked from it. The child takes on its caller's folder, environment
and streams, as a new process would, which is why this lives with the tests: product modules never
write the environment (tests/test_layout.py). `python -m tests.dbt_server SOCKET` runs one.
"""

from __future__ import annotations

import json
import os
import resource
import select
import socket
import subprocess
import sys
import threading
import traceback
from pathlib import Path
from typing import NoReturn

from pipelines.dbt_parse import MANIFEST, project_parse
from pipelines.dbt_preparse import predecode
from pipelines.dbt_server import INT
from pipelines.dbt_warm import NO_CODE, collect_less, end_command, receive_request, warm_up, watch_caller
from pipelines.jinja_code import precompile


def _run_dbt(args: list[str]) -> int:
    from pipelines.dbt_entry import run_dbt  # what `gpu-ledger-dbt` runs when no server answers

    return run_dbt(args)


def _child(conn: socket.socket, commands: Path) -> NoReturn:
    """One dbt command in a forked child: the caller's streams, folder and environment, then dbt; its
    folder and CPU s (the Spark driver JVM it reaped included) are appended to `commands`."""
    code, finished, cwd = NO_CODE, threading.Event(), ""
    try:
        request, fds = receive_request(conn)
        cwd = request["cwd"]
        for target, fd in zip((0, 1, 2), fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        conn.sendall(INT.pack(os.getpid()))
        watch_caller(conn, finished)
        code = _run_dbt(request["args"])
    except BaseException:  # noqa: BLE001 - reported on the caller's stderr, exit code 70
        traceback.print_exc()
    finally:
        end_command(conn, finished, code, lambda: _record(commands, cwd))


def _record(commands: Path, cwd: str) -> None:
    """Append this child's folder and CPU s (a forked child's counters start at zero) to `commands`:
    one short line in append mode, so that children finishing together do not mix their lines."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    line = json.dumps({"cwd": cwd, "cpu_s": round(own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime, 2)})
    try:
        with open(commands, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
    except OSError:
        pass


def _reap(stats: dict, stats_file: Path) -> None:
    """Collect finished children; keep the count, their CPU s and the signals that ended any of them
    (`killed_by`: signal number -> children) in `<socket>.json`."""
    changed = False
    while True:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        stats["commands"] += 1
        stats["cpu_s"] += usage.ru_utime + usage.ru_stime
        if os.WIFSIGNALED(status):
            signum = str(os.WTERMSIG(status))
            stats["killed_by"][signum] = stats["killed_by"].get(signum, 0) + 1
        changed = True
    if changed:
        tmp = stats_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(stats))
        tmp.replace(stats_file)


def stats_path(sock: Path) -> Path:
    """Where the server keeps how many commands it ran and their CPU s (children it reaped)."""
    return sock.with_suffix(".json")


def commands_path(sock: Path) -> Path:
    """Where the server's children write one line per dbt command: its folder and CPU s."""
    return sock.with_suffix(".commands.jsonl")


def commands(sock: Path) -> list[dict]:
    """The dbt commands the server on `sock` has run so far: [{"cwd": ..., "cpu_s": ...}, ...]."""
    try:
        lines = commands_path(sock).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    return [json.loads(line) for line in lines if line.endswith("}")]


def serve(sock: Path) -> None:
    """Import dbt (and build the schemas it validates with), then fork a child per connection on `sock`
    until the parent process goes away."""
    warm_up()  # what the refresh's own worker does first (pipelines/dbt_warm.py)
    precompile(MANIFEST)  # the project's Jinja, compiled once for every child (pipelines/jinja_code.py)
    predecode(project_parse())  # the parse every home copies, decoded once for every child
    collect_less()  # the same collector settings as the refresh's own worker
    if threading.active_count() != 1:  # a fork copies only the forking thread: say so if others exist
        print(f"dbt_server: {threading.active_count()} threads before forking", file=sys.stderr)
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(sock))
    listener.listen(64)
    stats: dict = {"commands": 0, "cpu_s": 0.0, "killed_by": {}}
    while os.getppid() == parent:
        ready, _, _ = select.select([listener], [], [], 0.5)
        _reap(stats, stats_path(sock))
        if not ready:
            continue
        conn, _ = listener.accept()
        sys.stdout.flush()
        sys.stderr.flush()
        if os.fork() == 0:
            listener.close()
            _child(conn, commands_path(sock))
        conn.close()


def start(sock: Path) -> subprocess.Popen:
    """Start a server on `sock` in its own session (a stray process-group kill does not reach it); it
    ends with the process that started it. Commands find it once it listens (~2 s of imports);
    until then they run dbt themselves."""
    return subprocess.Popen([sys.executable, "-m", "tests.dbt_server", str(sock)], start_new_session=True,
                            stdin=subprocess.DEVNULL, cwd=Path(__file__).resolve().parent.parent)


def stats(sock: Path) -> dict:
    """Commands the server on `sock` ran so far, their CPU s and `killed_by` ({} before the first finished)."""
    try:
        return json.loads(stats_path(sock).read_text())
    except (OSError, ValueError):
        return {}


if __name__ == "__main__":
    serve(Path(sys.argv[1]))
