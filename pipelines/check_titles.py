"""A check's title in words: '<what it finds>: <n> <things>' ('Bill above list price: 6 GPU bill lines'),
from the dbt test's meta (title, counts) in its config, else its yml description, instead of dbt's
'Got 6 results, configured to warn'. The meta sits in the test's own SQL config because dbt's partial parse
drops a yml patch of a singular test whose SQL changed.

A generic test without a title is named by its model, column and test ('fct_x.team_id: not null').
"""

from __future__ import annotations

from typing import Any


def _plain_name(node: dict[str, Any]) -> str:
    meta = node.get("test_metadata") or {}
    model = str(node.get("attached_node") or "").rsplit(".", 1)[-1]
    if meta.get("name"):
        column = node.get("column_name") or (meta.get("kwargs") or {}).get("column_name")
        where = ".".join(p for p in (model, column) if p)
        return f"{where}: {meta['name'].replace('_', ' ')}" if where else meta["name"].replace("_", " ")
    return str(node.get("name") or "check").replace("_", " ").capitalize()


def check_title(node: dict[str, Any], status: str, failures: Any = None, message: str = "") -> str:
    """The title of one dbt test outcome: meta.title, its description (first line) or a plain name, then what
    it found."""
    meta = (node.get("config") or {}).get("meta") or {}
    description = str(node.get("description") or "").strip().splitlines()
    title = meta.get("title") or (description[0].rstrip(".") if description else _plain_name(node))
    counts = meta.get("counts", "rows")
    if status in ("warn", "fail") and isinstance(failures, int):
        unit = counts[:-1] if failures == 1 and counts.endswith("s") else counts  # '1 provider', '6 providers'
        return f"{title}: {failures:,} {unit}"
    if status == "error":
        return f"{title}: could not run ({message})" if message else f"{title}: could not run"
    return title
