"""A warm dbt: one process imports dbt once and forks a child for each dbt command (issue 23).

Every dbt command the pipeline runs is a new Python process (dagster-dbt starts `gpu-ledger-dbt` as a
subprocess), and ~2 CPU s of each `dbt build` on the samples went to starting Python and importing
dbt, its adapters and their (de)serialisers before the first node ran (BENCHMARKS.md, session 15):
~20 % of a small build. The test suite runs ~30 of them.

When the variable GPU_LEDGER_DBT_SERVER names the socket of a running server
(`python -m pipelines.dbt_server SOCKET`), `gpu-ledger-dbt` sends it its arguments, working directory,
environment and standard streams (the file descriptors themselves); the server forks, and the child,
which has imported dbt and run nothing, runs exactly the command `gpu-ledger-dbt` would have run, on
the caller's streams, then reports its exit code. Without the variable, or when nothing answers on
the socket, `gpu-ledger-dbt` runs dbt itself, as it always did.

The caller stays the process dagster-dbt waits for and the one a kill reaches: it passes SIGINT,
SIGTERM and SIGHUP on to the child, and a child whose caller disappears (SIGKILL) kills itself
at once, so a killed refresh leaves no dbt running behind it.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import traceback
from pathlib import Path
from typing import NoReturn

ENV_VAR = "GPU_LEDGER_DBT_SERVER"

# Imported once by the server, before it forks: dbt's CLI and what a build, test, seed or docs command
# imports on its first use (found by diffing sys.modules around a sample build).
PRELOAD = (
    "dbt.cli.main", "dbt.task.build", "dbt.task.run", "dbt.task.test", "dbt.task.seed", "dbt.task.compile",
    "dbt.task.docs.generate", "dbt.compilation", "dbt.parser.sql", "dbt.graph.thread_pool",
    "dbt_common.clients.agate_helper", "dbt.adapters.duckdb", "dbt.adapters.duckdb.impl",
    "dbt.adapters.duckdb.environments.local", "dbt.adapters.spark", "dbt.adapters.spark.impl",
    "sqlparse", "daff", "babel.dates", "multiprocessing.dummy", "multiprocessing.pool",
)
_INT = struct.Struct("!i")
_NO_CODE = 70  # EX_SOFTWARE: the child failed before dbt could give an exit code


def _read_exactly(conn: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _read_int(conn: socket.socket) -> int | None:
    data = _read_exactly(conn, _INT.size)
    return None if data is None else _INT.unpack(data)[0]


# --- the caller: `gpu-ledger-dbt` (pipelines/dbt_entry.py) -------------------------------------------

def _stream_fds() -> list[int]:
    """Descriptors 0, 1, 2 to hand over (/dev/null in place of a closed one)."""
    fds = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            fds.append(fd)
        except OSError:
            fds.append(os.open(os.devnull, os.O_RDWR))
    return fds


def run_in_server(args: list[str]) -> int | None:
    """Run `dbt <args>` in the warm server named by GPU_LEDGER_DBT_SERVER; its exit code, or None when
    there is no server to run it (the caller then runs dbt itself: nothing has started)."""
    path = os.environ.get(ENV_VAR)
    if not path:
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        payload = json.dumps({"args": args, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
        socket.send_fds(conn, [_INT.pack(len(payload))], _stream_fds())
        conn.sendall(payload)
        pid = _read_int(conn)
    except OSError:
        pid = None
    if pid is None:  # no server, or it could not start the child: nothing ran
        conn.close()
        return None
    forwarded: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        forwarded.append(signum)
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, forward)
    code = _read_int(conn)
    if code is not None:
        return code
    if forwarded:  # the child died of the signal we passed on: end the same way
        signal.signal(forwarded[-1], signal.SIG_DFL)
        os.kill(os.getpid(), forwarded[-1])
    print(f"gpu-ledger-dbt: dbt (pid {pid}, in {path}) ended without an exit code", file=sys.stderr)
    return 1


# --- the server ------------------------------------------------------------------------------------

def _watch_caller(conn: socket.socket, finished: threading.Event) -> None:
    """Kill this child the moment its caller goes away (the caller's end of the socket closes)."""
    def watch() -> None:
        try:
            conn.recv(1)
        except OSError:
            pass
        if not finished.is_set():
            os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="caller-watch", daemon=True).start()


def _run_dbt(args: list[str]) -> int:
    from dbt.cli.main import cli

    try:
        cli(args=args, prog_name="dbt")
    except SystemExit as done:
        code = done.code
        if code is None or isinstance(code, int):
            return code or 0
        print(code, file=sys.stderr)
        return 1
    return 0


def _child(conn: socket.socket) -> NoReturn:
    """One dbt command in a forked child: the caller's streams, folder and environment, then dbt."""
    code, finished = _NO_CODE, threading.Event()
    try:
        msg, fds, _flags, _addr = socket.recv_fds(conn, _INT.size, 3)
        size = _INT.unpack(msg + (_read_exactly(conn, _INT.size - len(msg)) or b""))[0]
        request = json.loads(_read_exactly(conn, size) or b"null")
        for target, fd in zip((0, 1, 2), fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        conn.sendall(_INT.pack(os.getpid()))
        _watch_caller(conn, finished)
        code = _run_dbt(request["args"])
    except BaseException:  # noqa: BLE001 - reported on the caller's stderr, exit code 70
        traceback.print_exc()
    finally:
        try:
            atexit._run_exitfuncs()  # what a dbt process runs at exit (multiprocessing's finalizers)
        except BaseException:  # noqa: BLE001, S110 - the exit code is what matters now
            pass
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        finished.set()
        try:
            conn.sendall(_INT.pack(code))
        except OSError:
            pass
        os._exit(code)


def _reap(stats: dict[str, float], stats_file: Path) -> None:
    """Collect finished children; keep the count and their CPU s in `<socket>.json`."""
    changed = False
    while True:
        try:
            pid, _status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        stats["commands"] += 1
        stats["cpu_s"] += usage.ru_utime + usage.ru_stime
        changed = True
    if changed:
        tmp = stats_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(stats))
        tmp.replace(stats_file)


def stats_path(sock: Path) -> Path:
    """Where the server keeps how many commands it ran and their CPU s (children it reaped)."""
    return sock.with_suffix(".json")


def serve(sock: Path) -> None:
    """Import dbt, then fork a child per connection on `sock` until the parent process goes away."""
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:  # an adapter that is not installed: its commands import it themselves
            pass
    if threading.active_count() != 1:  # a fork copies only the forking thread: say so if others exist
        print(f"dbt_server: {threading.active_count()} threads before forking", file=sys.stderr)
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(sock))
    listener.listen(64)
    stats: dict[str, float] = {"commands": 0, "cpu_s": 0.0}
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
            _child(conn)
        conn.close()


def start(sock: Path) -> subprocess.Popen:
    """Start a server on `sock` in its own session (a stray process-group kill does not reach it); it
    ends with the process that started it. Commands find it once it listens (~2 s of imports);
    until then they run dbt themselves."""
    return subprocess.Popen([sys.executable, "-m", "pipelines.dbt_server", str(sock)], start_new_session=True,
                            stdin=subprocess.DEVNULL, cwd=Path(__file__).resolve().parent.parent)


def stats(sock: Path) -> dict[str, float]:
    """Commands the server on `sock` ran so far and their CPU s ({} before the first finished)."""
    try:
        return json.loads(stats_path(sock).read_text())
    except (OSError, ValueError):
        return {}


if __name__ == "__main__":
    serve(Path(sys.argv[1]))
