"""The only Definitions: merges `defs` from every module under pipelines/defs/ (autoloaded)."""

from __future__ import annotations

import importlib
import pkgutil

import dagster as dg

import pipelines.defs as defs_pkg


def _area_defs() -> list[dg.Definitions]:
    found = []
    for info in sorted(pkgutil.walk_packages(defs_pkg.__path__, prefix="pipelines.defs."), key=lambda m: m.name):
        module = importlib.import_module(info.name)
        area = getattr(module, "defs", None)
        if isinstance(area, dg.Definitions):
            found.append(area)
    return found


defs = dg.Definitions.merge(*_area_defs())
