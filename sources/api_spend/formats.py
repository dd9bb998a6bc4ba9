"""Family-local format lookup (same discovery rule as sources/catalog.py, api_spend only).

Used by tests and the fetch CLI path so a broken module in another family cannot hide ours.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import sources.api_spend as family
from sources.common import SourceFormat, read_head


def api_spend_formats() -> list[SourceFormat]:
    """Every SourceFormat defined by a module of sources/api_spend/."""
    found: list[SourceFormat] = []
    for info in sorted(pkgutil.iter_modules(family.__path__), key=lambda m: m.name):
        if info.name == "formats":
            continue
        module = importlib.import_module(f"{family.__name__}.{info.name}")
        found.extend(getattr(module, "FORMATS", []))
    return found


def matching_formats(path: Path) -> list[str]:
    """Names of every api_spend format whose detector accepts `path` (ideally exactly one)."""
    head = read_head(Path(path))
    return [f.name for f in api_spend_formats() if f.detect(Path(path), head)]
