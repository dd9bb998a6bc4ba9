"""Turns a mapping from `mappings.py` into SQL over view `raw` (shared by CUR, Azure and OCI)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import duckdb

from sources.billing import mappings
from sources.billing.engine import Staged, connect, finish, lit
from sources.billing.gates import gate
from sources.billing.reader import RawFile, header_key, load_file
from sources.common import ParseOutput, UnreadableFile

_PLACEHOLDER = re.compile(r"\[\[([^\]]+)\]\]")


def _alternatives(names: str, lookup: dict[str, str], used: set[str]) -> str:
    """`a|b` -> coalesce of the present columns (NULL if none)."""
    cols = [lookup[header_key(n)] for n in names.split("|") if header_key(n) in lookup]
    used.update(cols)
    if not cols:
        return "cast(null as varchar)"
    return cols[0] if len(cols) == 1 else f"coalesce({', '.join(cols)})"


def render(spec: Any, lookup: dict[str, str], used: set[str]) -> str:
    """SQL for one mapping spec; records which raw columns it reads in `used`."""
    if isinstance(spec, str):
        return _alternatives(spec, lookup, used)
    if "const" in spec:
        return lit(spec["const"])
    if "sql" in spec:
        return _PLACEHOLDER.sub(lambda m: _alternatives(m.group(1), lookup, used), spec["sql"])
    raise ValueError(f"bad mapping spec {spec!r}")


def tags_from_prefix(raw: RawFile, prefix: str, used: set[str]) -> str | None:
    """JSON object text from one-column-per-tag columns (`tags/<ns>.<key>`, `resourceTags/user:x`)."""
    cols = [(name[len(prefix):], col) for name, col in raw.columns.items() if name.lower().startswith(prefix.lower())]
    if not cols:
        return None
    used.update(c for _, c in cols)
    entries = ", ".join(f"{{'k': {lit(k)}, 'v': {c}}}" for k, c in cols)
    return (
        f"nullif(to_json(map_from_entries(list_filter([{entries}], "
        f"e -> e.v is not null and trim(e.v) <> ''))):: varchar, '{{}}')"
    )


def tags_from_map(raw: RawFile, column: str, drop_prefix: str, used: set[str]) -> str | None:
    """JSON object text from one map column (CUR 2.0's `resource_tags`: a JSON object in a CSV, a MAP in
    Parquet), each key without `drop_prefix` (AWS's `user_` before user-defined keys); empty values dropped."""
    col = raw.lookup().get(header_key(column))
    if col is None:
        return None
    used.add(col)
    j = f"try_cast({col} as json)"
    entries = f"list_transform(json_keys({j}), k -> {{'k': regexp_replace(k, '^{drop_prefix}', ''), 'v': {j} ->> k}})"
    return (f"nullif(to_json(map_from_entries(list_filter({entries}, "
            f"e -> e.v is not null and trim(e.v) <> ''))):: varchar, '{{}}')")


def stage(raw: RawFile, mapping: dict[str, Any], version: str, fmt: str) -> Staged:
    """Expressions for every mapped FOCUS column; unmapped source columns go to x_extra."""
    lookup = raw.lookup()
    used: set[str] = set()
    exprs: dict[str, str] = {}
    for focus, spec in mapping.items():
        if focus.startswith("_"):
            continue
        exprs[focus] = render(spec, lookup, used)
    tags = tags_from_map(raw, *mapping["_tags_map"], used) if "_tags_map" in mapping else None
    prefix = mapping.get("_tags_prefix")
    tags = tags or (tags_from_prefix(raw, prefix, used) if prefix else None)
    if tags:
        exprs["Tags"] = tags
    extra = {name: col for name, col in raw.columns.items() if col not in used}
    return Staged(exprs=exprs, extra=extra, focus_version=version, source_format=fmt)


def parse_legacy(
    path: Path, mapping: dict[str, Any], version: str, fmt: str, required: tuple[str, ...]
) -> tuple[ParseOutput, duckdb.DuckDBPyConnection]:
    """Load, check the required source columns, stage with `mapping` and type. Returns the
    output (through the load-time gates, `gates.py`) and the open connection (for
    format-specific warnings)."""
    con = connect()
    for macro in mappings.MACROS:
        con.execute(macro)
    raw = load_file(con, path, text=True)  # the mappings are written against CSV text
    lookup = raw.lookup()
    missing = [r for r in required if not any(header_key(a) in lookup for a in r.split("|"))]
    if missing:
        raise UnreadableFile(path, 1, f"required columns missing: {', '.join(missing)}")
    staged = stage(raw, mapping, version, fmt)
    return gate(finish(con, raw, staged)), con
