"""Discovers every `SourceFormat` under `sources/<family>/` and recognises files by content.

Adding a format means adding a module that defines `FORMATS = [...]`; nothing here changes.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import cache
from pathlib import Path

import sources
from sources.common import SourceFormat, head_text, read_head, wide_text_encoding

FAMILIES = ("billing", "usage", "benchmarks", "api_spend", "prices", "registry", "fx")


@cache
def all_formats() -> tuple[SourceFormat, ...]:
    """Every format defined in `sources.<family>.<module>.FORMATS`, in a stable order."""
    found: list[SourceFormat] = []
    for family in FAMILIES:
        try:
            pkg = importlib.import_module(f"sources.{family}")
        except ModuleNotFoundError:
            continue
        for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
            module = importlib.import_module(f"sources.{family}.{info.name}")
            found.extend(getattr(module, "FORMATS", []))
    return tuple(found)


def formats_for(family: str) -> list[SourceFormat]:
    """Formats of one family (the input folder name)."""
    return [f for f in all_formats() if f.family == family]


def recognise(path: Path, family: str) -> SourceFormat | None:
    """The first format of `family` whose `detect` accepts this file, else None."""
    head = read_head(path)
    return next((fmt for fmt in formats_for(family) if _detects(fmt, path, head)), None)


def _detects(fmt: SourceFormat, path: Path, head: bytes) -> bool:
    try:
        return bool(fmt.detect(path, head))
    except Exception:  # a detector that trips on odd bytes simply does not match
        return False


def unrecognised_reason(path: Path, family: str) -> str:
    """Why no format of `family` recognised this file and what would make it readable, as a clause for its
    quarantine reason; "" when nothing more is known. In order: a UTF-16/32 byte order mark, Excel's `sep=,`
    line before the header (both any family's), a format of the family that knows this near miss
    (`SourceFormat.near_miss`), a format of another family that reads it (the file is in the wrong folder: it
    is not loaded there, the folder names the family)."""
    head = read_head(path)
    wide = wide_text_encoding(head)
    if wide:
        return f"it is {wide} text, from its byte order mark: save it as UTF-8"
    first = head_text(head).split("\n", 1)[0].strip()
    if re.fullmatch(r"(?i)sep=.", first):  # Excel's delimiter hint, before the header
        return f"its first line is Excel's delimiter hint `{first}`, not the header: delete that line"
    for fmt in formats_for(family):
        hint = fmt.near_miss(path, head) if fmt.near_miss is not None else None
        if hint:
            return hint
    for fmt in all_formats():
        if fmt.family != family and _detects(fmt, path, head):
            return f"it reads as {fmt.name} ({fmt.family} data): put it in the inputs' {fmt.family}/ folder"
    return ""


_ = sources  # the package import anchors discovery
