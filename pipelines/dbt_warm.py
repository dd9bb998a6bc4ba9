"""A dbt process started with the refresh, so that its start overlaps landing and parsing.

The refresh's `dbt build` is a new Python process (dagster-dbt starts `gpu-ledger-dbt`); before its first
node runs it imports dbt, its adapters and their (de)serialisers and builds the JSON schemas dbt
validates the project and profile with: ~2 CPU s, all on the refresh's critical path, while the
second core sits idle during the Dagster imports, landing and parsing before it. `gpu-ledger run`
therefore starts this worker as its first step (`warm_dbt`): it does that work at once, then waits
on a socket in the home for one command. When dagster-dbt's `gpu-ledger-dbt --in HOME` starts, it
hands its command to the worker (`pipelines/dbt_server.py`, the same wire as the test session's warm
server), which runs exactly that command on the caller's streams and reports its exit code. While it
waits, the worker also compiles the project's Jinja (`pipelines/jinja_code.py`) and decodes the build's
saved parse (`pipelines/dbt_preparse.py`).

The worker only runs a command whose folder and environment are exactly its own (it was started
with the environment dagster-dbt gives dbt), as a new process would have had them; any other
command is refused and its caller runs dbt itself. The worker never writes its environment. It
serves one connection, and it ends with the refresh (or when the process that started it dies).
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NoReturn

from pipelines.dbt_server import ENV_VAR, INT, read_exactly

# Imported before the command comes: dbt's CLI and what a build, test, seed or docs command imports
# on its first use (found by diffing sys.modules around a sample build).
PRELOAD = (
    "dbt.cli.main", "dbt.task.build", "dbt.task.run", "dbt.task.test", "dbt.task.seed", "dbt.task.compile",
    "dbt.task.docs.generate", "dbt.compilation", "dbt.parser.sql", "dbt.graph.thread_pool",
    "dbt_common.clients.agate_helper", "dbt.adapters.duckdb", "dbt.adapters.duckdb.impl",
    "dbt.adapters.duckdb.environments.local", "dbt.adapters.spark", "dbt.adapters.spark.impl",
    "sqlparse", "daff", "babel.dates", "multiprocessing.dummy", "multiprocessing.pool",
)
# dbt validates dbt_project.yml, profiles.yml and selectors against JSON schemas it builds from these
# classes on first use (cached per process): ~0.4 of a command's ~1.1 CPU s after the imports.
_SCHEMA_CLASSES = (
    ("dbt.contracts.project", ("Project", "ProjectFlags", "ProfileConfig", "PackageConfig", "Configuration")),
    ("dbt.contracts.selection", ("SelectorFile",)),
    ("dbt.adapters.duckdb.credentials", ("DuckDBCredentials",)),
)
SOCKET_NAME = ".dbt-warm.sock"  # in the home; relative to it (a socket path is limited to 107 bytes)
NO_CODE = 70  # EX_SOFTWARE: the command failed before dbt could give an exit code


def warm_up() -> None:
    """Import what a dbt command imports and build the schemas it validates with, before any command."""
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:  # an adapter that is not installed: its commands import it themselves
            pass
    for module_name, names in _SCHEMA_CLASSES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for name in names:
            cls = getattr(module, name, None)
            if cls is not None and hasattr(cls, "json_schema"):
                cls.json_schema()


# Python's cyclic collector in a dbt command: a full build of a sample home (~300 nodes, the manifest's
# objects alive throughout) spent 1.7-2.0 of 12.8-13.8 CPU s in it at the default thresholds (700, 10, 10):
# ~1,230 young collections. With the warmed-up imports frozen (they live to the end anyway) and a young
# threshold of 20,000: 0.8-0.9 s, 11.1-11.3 CPU s, the same peak memory (~250 MB); the collector off
# saved a little more but took ~110 MB more per command (2026-12-05, load ~15).
GC_THRESHOLDS = (20_000, 10, 10)


def collect_less() -> None:
    """Move what is alive now (the warmed-up imports) out of the collector's sight, and collect young
    objects less often in the command that follows."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def dbt_env(target_path: Path, project_dir: Path, profiles_dir: Path) -> dict[str, str]:
    """The environment dagster-dbt's `DbtCliResource.cli` gives the dbt process it starts (dagster-dbt
    0.29: this process's environment plus these variables), for a build writing to `target_path`."""
    return {"PYTHONLEGACYWINDOWSSTDIO": "1", **os.environ, "DAGSTER_DBT_CLI": "true", "PYTHONUNBUFFERED": "1",
            "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "DBT_LOG_FORMAT": "json",
            "DBT_TARGET_PATH": os.fspath(target_path), "DBT_LOG_PATH": os.fspath(target_path),
            "DBT_PROFILES_DIR": os.fspath(profiles_dir), "DBT_PROJECT_DIR": os.fspath(project_dir)}


@contextlib.contextmanager
def warm_dbt(home: Path, target_path: Path, log_path: Path) -> Iterator[subprocess.Popen | None]:
    """Start the worker in `home` for the build that will write to `target_path`; stop it on leaving.

    Nothing is started when the test session's warm server is named (GPU_LEDGER_DBT_SERVER): every
    command goes there. The worker's own output (a refused command's reason) goes to `log_path`."""
    from pipelines.dbt_parse import refresh_home_parse

    refresh_home_parse(target_path)
    if os.environ.get(ENV_VAR):
        yield None
        return
    from warehouse.home import DBT_DIR

    sock = home / SOCKET_NAME
    sock.unlink(missing_ok=True)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        proc = subprocess.Popen([sys.executable, "-m", "pipelines.dbt_warm", SOCKET_NAME], cwd=home,
                                env=dbt_env(target_path, DBT_DIR, DBT_DIR), stdin=subprocess.DEVNULL,
                                stdout=log, stderr=log, start_new_session=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:  # never asked, or still running a command whose caller has gone
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        sock.unlink(missing_ok=True)


def socket_in(folder: Path) -> Path | None:
    """The worker's socket in `folder` (relative: the caller runs inside it), if one listens there."""
    return Path(SOCKET_NAME) if (folder / SOCKET_NAME).is_socket() else None


def receive_request(conn: socket.socket) -> tuple[dict, list[int]]:
    """One command as `pipelines/dbt_server.py` sends it: (the request: args, cwd, env; the caller's
    stdin, stdout and stderr as file descriptors)."""
    msg, fds, _flags, _addr = socket.recv_fds(conn, INT.size, 3)
    size = INT.unpack(msg + (read_exactly(conn, INT.size - len(msg)) or b""))[0]
    return json.loads(read_exactly(conn, size) or b"null"), fds


def _refusal(request: dict) -> str | None:
    """Why this process may not run the request as the new process it stands in for (None: it may)."""
    if request.get("cwd") != os.getcwd():
        return f"folder {request.get('cwd')} is not {os.getcwd()}"
    env = request.get("env") or {}
    differ = sorted(k for k in set(env) | set(os.environ) if env.get(k) != os.environ.get(k))
    return f"environment differs in {', '.join(differ)}" if differ else None


def watch_caller(conn: socket.socket, finished: threading.Event) -> None:
    """End this process the moment its caller goes away (the caller's end of the socket closes), unless
    `finished` is set: a warm dbt whose caller was killed leaves no dbt behind (also the test server's)."""
    def watch() -> None:
        try:
            conn.recv(1)
        except OSError:
            pass
        if not finished.is_set():
            from pipelines.dbt_entry import stop_spark

            stop_spark(stop_context=False)  # a Spark driver JVM ends with its dbt, not after it
            os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="caller-watch", daemon=True).start()


def _serve(conn: socket.socket) -> NoReturn:
    """Run the one command sent on `conn` on the caller's streams, or refuse it; then exit."""
    code, finished = NO_CODE, threading.Event()
    try:
        request, fds = receive_request(conn)
        reason = _refusal(request)
        if reason is not None:  # the caller gets no pid and runs dbt itself
            print(f"dbt_warm: refused {request.get('args')}: {reason}", file=sys.stderr, flush=True)
            for fd in fds:
                os.close(fd)
            conn.close()
            os._exit(0)
        print(f"dbt_warm: running {request.get('args')}", file=sys.stderr, flush=True)
        sys.stdout.flush()
        log = os.dup(2)  # the worker's log, for the line after the command (its streams become the caller's)
        for target, fd in zip((0, 1, 2), fds):
            os.dup2(fd, target)
            os.close(fd)
        conn.sendall(INT.pack(os.getpid()))
        watch_caller(conn, finished)
        from pipelines.dbt_entry import run_dbt  # what `gpu-ledger-dbt` runs when nothing answers

        code = run_dbt(request["args"])
        from pipelines.dbt_preparse import handed_out

        os.write(log, f"dbt_warm: exit code {code}; the parse decoded ahead was {'' if handed_out() else 'not '}"
                      "used\n".encode())
    except BaseException:  # noqa: BLE001 - reported on the caller's stderr, exit code 70
        traceback.print_exc()
    finally:
        end_command(conn, finished, code)


def end_command(conn: socket.socket, finished: threading.Event, code: int,
                before_reply: Callable[[], None] | None = None) -> NoReturn:
    """End a process that ran one dbt command as a new dbt process ends: its exit functions
    (multiprocessing's finalizers release the manifest's semaphore), its streams flushed; then
    `before_reply`, the exit code to the caller, and exit."""
    try:
        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001, S110 - the exit code is what matters now
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if before_reply is not None:
        before_reply()
    finished.set()
    try:
        conn.sendall(INT.pack(code))
    except OSError:
        pass
    os._exit(code)


def serve_once(sock: Path) -> None:
    """Warm up, then serve one connection on `sock`; return when the starting process goes away."""
    from pipelines.dbt_parse import MANIFEST, parse_to_read
    from pipelines.dbt_preparse import predecode
    from pipelines.jinja_code import precompile

    parent = os.getppid()
    warm_up()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(sock))
    listener.listen(1)
    # Listening first: a command that comes while the project's Jinja compiles waits in the backlog for
    # what it would have compiled itself, instead of starting a cold dbt of its own.
    precompile(MANIFEST)
    predecode(parse_to_read(Path(os.environ.get("DBT_TARGET_PATH", "target"))))
    collect_less()
    while os.getppid() == parent:
        ready, _, _ = select.select([listener], [], [], 0.5)
        if ready:
            conn, _ = listener.accept()
            listener.close()
            _serve(conn)


if __name__ == "__main__":
    serve_once(Path(sys.argv[1]))
