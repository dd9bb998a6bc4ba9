"""A warm dbt: `gpu-ledger-dbt` hands its command to a process that imported dbt once.

Every dbt command the pipeline runs is a new Python process (dagster-dbt starts `gpu-ledger-dbt` as a
subprocess), and ~2 CPU s of each `dbt build` on the samples went to starting Python and importing
dbt, its adapters and their (de)serialisers before the first node ran:
~20 % of a small build. The test suite runs ~30 of them.

When the variable GPU_LEDGER_DBT_SERVER names the socket of a running server (the test session starts
one: `tests/dbt_server.py`), `gpu-ledger-dbt` sends it its arguments, working directory, environment
and standard streams (the file descriptors themselves); the server forks, and the child, which has
imported dbt and run nothing, runs exactly the command `gpu-ledger-dbt` would have run, on the
caller's streams, then reports its exit code. Without the variable, or when nothing answers on the
socket, `gpu-ledger-dbt` runs dbt itself, as it always did. This module is the caller's side and the
wire format; it only reads the environment.

The caller stays the process dagster-dbt waits for and the one a kill reaches: it passes SIGINT,
SIGTERM and SIGHUP on to the child, and a child whose caller disappears (SIGKILL) kills itself
at once, so a killed refresh leaves no dbt running behind it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys

ENV_VAR = "GPU_LEDGER_DBT_SERVER"
INT = struct.Struct("!i")  # the wire format: a length, a pid or an exit code


def read_exactly(conn: socket.socket, size: int) -> bytes | None:
    """`size` bytes from `conn`, or None if it closed first."""
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def read_int(conn: socket.socket) -> int | None:
    """One wire integer from `conn`, or None if it closed first."""
    data = read_exactly(conn, INT.size)
    return None if data is None else INT.unpack(data)[0]


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


def run_in_server(args: list[str], path: str | None = None) -> int | None:
    """Run `dbt <args>` in the warm server named by GPU_LEDGER_DBT_SERVER (else at `path`: the refresh's
    own worker, pipelines/dbt_warm.py); its exit code, or None when there is no server to run it or it
    refuses the command (the caller then runs dbt itself: nothing has started)."""
    path = os.environ.get(ENV_VAR) or path
    if not path:
        return None
    # The handlers go in before the child exists: a signal that comes between the server's fork and
    # their installation would otherwise end this caller by default, its socket would close and the
    # child would kill itself with SIGKILL instead of ending by the signal passed on. One that comes
    # before the child's pid is known is passed on as soon as it is.
    forwarded: list[int] = []
    child: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        forwarded.append(signum)
        if child:
            try:
                os.kill(child[0], signum)
            except ProcessLookupError:
                pass

    previous = {signum: signal.signal(signum, forward) for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        payload = json.dumps({"args": args, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
        socket.send_fds(conn, [INT.pack(len(payload))], _stream_fds())
        conn.sendall(payload)
        pid = read_int(conn)
    except OSError:
        pid = None
    if pid is None:  # no server, or it could not start the child: nothing ran
        conn.close()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if forwarded:  # a signal meant for this command: end by it, as without a server
            signal.signal(forwarded[-1], signal.SIG_DFL)
            os.kill(os.getpid(), forwarded[-1])
        return None
    child.append(pid)
    for signum in forwarded:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass
    try:
        code = read_int(conn)
    except OSError:  # the server's end broke (e.g. reset): no exit code came
        code = None
    if code is not None:
        return code
    if forwarded:  # the child died of the signal we passed on: end the same way
        signal.signal(forwarded[-1], signal.SIG_DFL)
        os.kill(os.getpid(), forwarded[-1])
    print(f"gpu-ledger-dbt: dbt (pid {pid}, in {path}) ended without an exit code", file=sys.stderr)
    return 1
