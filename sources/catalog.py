"""Discovers every `SourceFormat` under `sources/<family>/` and recognises files by content.

Adding a format means adding a module that defines `FORMATS = [...]`; nothing here changes.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from pathlib import Path

import sources
from sources.common import SourceFormat, read_head

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
    for fmt in formats_for(family):
        try:
            if fmt.detect(path, head):
                return fmt
        except Exception:  # a detector that trips on odd bytes simply does not match
            continue
    return None


_ = sources  # the package import anchors discovery
