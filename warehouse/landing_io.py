"""Reading inputs and writing the landing folder, told apart: a failed read of an input is that input's
problem (it is refused and quarantined, the others land), a failed write of the landing folder is the
ledger's own (`LandingWriteError`: the refresh stops and says so; no input is refused for it).

Found when the disk under a home filled up: every input the landing was copying was recorded as
"cannot be read: No space left on device", and those refusals stayed in the manifest and the audit after
the disk had room again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = ["LandingWriteError", "landing_copy", "open_nofollow", "sha256_of", "writing"]


def open_nofollow(path: Path):
    """Open for reading, refusing a symbolic link: a file swapped for a link after the scan fails
    here (ELOOP) instead of being read through the link; a FIFO put there opens without blocking."""
    return os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)), "rb")


class LandingWriteError(Exception):
    """The landing folder could not be written (a full disk, a quota, a read-only mount). The ledger's own
    storage failed, not the input: no input is refused for it (an OSError of a read is a refusal); the
    refresh stops and says so, and the next run lands the same files."""


@contextlib.contextmanager
def writing(path: Path, name: str) -> Iterator[None]:
    """Turn an OSError of a write to the landing folder into LandingWriteError (`name`: the input's)."""
    try:
        yield
    except OSError as exc:
        raise LandingWriteError(f"landing folder: cannot write {path} (for {name}): {exc.strerror or exc}") from exc


@contextlib.contextmanager
def landing_copy(path: Path | None, name: str) -> Iterator[Callable[[bytes], object]]:
    """A writer of the bytes read into `path` (none: a writer that keeps nothing); its failures raise
    LandingWriteError."""
    if path is None:
        yield len
        return
    with writing(path, name):
        out = open(path, "wb")  # noqa: SIM115 - closed below, also when a write fails

    def write(chunk: bytes) -> None:
        with writing(path, name):
            out.write(chunk)

    try:
        yield write
    except BaseException:
        with contextlib.suppress(OSError):
            out.close()
        raise
    with writing(path, name):
        out.close()


def sha256_of(path: Path, copy_to: Path | None = None) -> str:
    """Streaming sha256 of a file; with `copy_to`, the bytes are written there as they are hashed
    (one read of the file lands it: `land_inputs`). A failed read raises OSError, a failed write
    LandingWriteError."""
    digest = hashlib.sha256()
    with open_nofollow(path) as fh, landing_copy(copy_to, path.name) as write:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
            write(chunk)
    return digest.hexdigest()
