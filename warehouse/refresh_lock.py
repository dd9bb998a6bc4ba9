"""One refresh of a home at a time: an exclusive lock on `HOME/refresh.lock`.

Two refreshes of one home would both open `ledger.duckdb` for writing; DuckDB lets only one
process do that, so the second died midway with a raw "Could not set lock on file" error. The
lock is taken before anything of the home is touched: a second refresh waits up to its bound,
then stops with `RefreshBusy` naming the running one (pid and start time, kept in the file).

The lock is `flock` on the file, held by the open descriptor: the kernel releases it when its
process ends, however it ends (kill -9, power loss), so a lock left by a dead process is taken
over by the next refresh, which overwrites the dead pid in the file. The file itself stays
(deleting a lock file while another process waits on it would let two refreshes in).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

LOCK_NAME = "refresh.lock"
POLL_S = 0.5


class RefreshBusy(RuntimeError):
    """Another refresh of the same home holds the lock."""

    def __init__(self, home: Path, holder: dict) -> None:
        self.home = home
        self.holder = holder
        since = holder.get("started_at") or "an unknown time"
        pid = holder.get("pid") or "unknown"
        super().__init__(f"another refresh of {home} is running since {since}, pid {pid} "
                         f"(lock {home / LOCK_NAME}); try again when it has finished")


def read_holder(home: Path) -> dict:
    """What the lock file says about its holder ({} when empty or unreadable)."""
    try:
        doc = json.loads((home / LOCK_NAME).read_text() or "{}")
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _holder_once_written(home: Path, within_s: float = 1.0) -> dict:
    """The holder, read again for a moment while the file is empty: a refresh that has just taken
    the lock writes its pid a few microseconds later."""
    deadline = time.monotonic() + within_s
    while not (holder := read_holder(home)) and time.monotonic() < deadline:
        time.sleep(0.01)
    return holder


@contextlib.contextmanager
def refresh_lock(home: Path, wait_s: float = 0.0) -> Iterator[dict]:
    """Hold the home's refresh lock for the block; waits up to `wait_s` seconds for a running
    refresh to finish, then raises RefreshBusy. Yields what it wrote about itself."""
    home.mkdir(parents=True, exist_ok=True)
    fd = os.open(home / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + max(0.0, wait_s)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RefreshBusy(home, _holder_once_written(home)) from None
                time.sleep(min(POLL_S, left))
        me = {"pid": os.getpid(), "host": socket.gethostname(),
              "started_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode(), 0)
        try:
            yield me
        finally:
            os.ftruncate(fd, 0)  # no pid left behind to be mistaken for a running refresh
    finally:
        os.close(fd)  # releases the flock
