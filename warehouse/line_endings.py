"""Line ends a CSV reader in strict mode refuses, and a copy of the file without them.

DuckDB's CSV reader (strict mode, which every CSV parser here uses so that a malformed line becomes a
reject with its line number) stops on the whole file, "The CSV Parser state machine reached an invalid
state", when a file's lines do not all end the same way: a CRLF export with LF lines appended (files
joined with `cat`), or every line ending CR CR LF (a CRLF file written again in text mode on Windows).
One odd line end would otherwise quarantine every good row of the file. `warehouse/ingest.py` calls
`uniform_copy` only after a parse failed, and parses the copy in its place: every `\\r*\\n` becomes the
line end most of the file's lines have, so the file has as many lines as before and every line number
a parser reports is the landed file's own. A line end inside a quoted value changes the same way; a
bare CR that ends no line is left as it is.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

from sources.common import is_gzip, open_bytes

CHUNK = 1 << 24  # bytes read at a time: memory stays flat whatever the file's size


class LineEnds(NamedTuple):
    """How a file's lines end: `lf` lines in all, `crlf` of them after one CR, `extra_cr` after more than one."""

    lf: int
    crlf: int
    extra_cr: int

    @property
    def mixed(self) -> bool:
        return 0 < self.crlf < self.lf or self.extra_cr > 0

    @property
    def majority(self) -> bytes:
        return b"\r\n" if 2 * self.crlf >= self.lf else b"\n"


def _lines(fh: BinaryIO) -> Iterator[bytes]:
    """Chunks of whole lines (the last may lack its line end): a line end never spans two chunks."""
    rest = b""
    while chunk := fh.read(CHUNK):
        chunk = rest + chunk
        cut = chunk.rfind(b"\n") + 1
        rest = chunk[cut:]
        if cut:
            yield chunk[:cut]
    if rest:
        yield rest


def _uniform(block: bytes, term: bytes) -> bytes:
    """Every CR* LF of `block` as `term`. bytes.replace, not a regular expression: a 270 MB DCGM CSV with
    438,945 of 1,438,945 lines in LF took 5.0-5.6 s against 10.7 s (both beside a running CI)."""
    while b"\r\n" in block:  # one CR less before each LF a pass: CR CR LF takes two
        block = block.replace(b"\r\n", b"\n")
    return block.replace(b"\n", term) if term != b"\n" else block


def line_ends(path: Path) -> LineEnds:
    """Count how the lines of `path` (plain or gzip) end."""
    lf = crlf = extra = 0
    with open_bytes(path) as fh:
        for block in _lines(fh):
            lf += block.count(b"\n")
            crlf += block.count(b"\r\n")
            extra += block.count(b"\r\r\n")
    return LineEnds(lf, crlf, extra)


class UniformCopy(NamedTuple):
    """A copy of a file with uniform line ends: where it is, what was mixed, the line end now used."""

    path: Path
    mixed: str
    end: str

    @property
    def warning(self) -> str:
        return f"mixed line ends ({self.mixed}): read with every line ending in {self.end}"


def uniform_copy(path: Path, folder: Path) -> UniformCopy | None:
    """A copy of `path` in `folder` (same name, gzip kept) whose every line ends as most of its lines do;
    None when the file's line ends are uniform already."""
    ends = line_ends(path)
    if not ends.mixed:
        return None
    term = ends.majority
    target = folder / path.name
    if target.resolve() == path.resolve():
        raise ValueError(f"the copy of {path} would overwrite it: give another folder")
    gz = is_gzip(path)
    with open_bytes(path) as src, (gzip.open(target, "wb", compresslevel=1) if gz else target.open("wb")) as out:
        for block in _lines(src):
            out.write(_uniform(block, term))
    name = "CRLF" if term == b"\r\n" else "LF"
    odd = ends.lf - ends.crlf if term == b"\r\n" else ends.crlf
    parts = [f"{odd:,} of {ends.lf:,} lines did not end in {name}"] if odd else []
    if ends.extra_cr:
        parts.append(f"{ends.extra_cr:,} of {ends.lf:,} ended in CR CR LF")
    return UniformCopy(target, "; ".join(parts), name)
