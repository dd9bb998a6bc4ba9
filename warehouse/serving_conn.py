"""Connections to the published copy (serving.duckdb): one per query, or one per `reading` block.

A query normally opens a short-lived read-only connection and closes it, so a refresh can rename a
new publication into place at any time. A batch reader that runs many queries in a row (the team
reports: ~140 per refresh) wraps them in `reading(path)`: one connection for the block, in that
thread / context only. Opening the publication costs ~30 ms (its catalog), which was most of a
report's time. Within the block the publication cannot change, so a query asked again with the same
parameters (a team's anomaly series, workloads and forecasts, the charges-through date: the same in
each of the team's monthly reports) is answered from the block's first answer, as a copy: reports
of a year of history asked 1,023 queries, 72 of them for the one charges-through date.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd


class NotPublished(LookupError):
    """A table or column the caller needs is not (yet) in the publication."""


# (path, connection, answers by query and parameters) of the enclosing `reading()` block in this thread /
# context, if any.
_READING: ContextVar[tuple[str, duckdb.DuckDBPyConnection, dict[str, pd.DataFrame]] | None] = ContextVar(
    "serving_reading", default=None)


@contextmanager
def reading(path: Path) -> Iterator[None]:
    """Within the block, every `query` on `path` from this thread shares one read-only connection.

    The block sees the publication that was in place when it started, even if a refresh renames a
    new one into place meanwhile (a report is written from one publication, never from two).
    """
    if not Path(path).exists():
        raise NotPublished(f"nothing is published yet ({path})")
    con = duckdb.connect(str(path), read_only=True)
    token = _READING.set((str(path), con, {}))
    try:
        yield
    finally:
        _READING.reset(token)
        con.close()


def query(path: Path, sql: str, params: list[Any] | None = None) -> pd.DataFrame:
    """Run one query on a read-only connection (fresh, or the enclosing `reading` block's);
    DECIMAL columns come back as Decimal."""
    shared = _READING.get()
    if shared is not None and shared[0] == str(path):
        key = repr((sql, params or []))  # parameters are dates, strings and numbers: repr tells them apart
        if key not in shared[2]:
            shared[2][key] = _frame(shared[1], sql, params)
        return shared[2][key].copy()  # a caller may add or drop columns of its frame
    if not Path(path).exists():
        raise NotPublished(f"nothing is published yet ({path})")
    con = duckdb.connect(str(path), read_only=True)
    try:
        return _frame(con, sql, params)
    finally:
        con.close()


def _frame(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None) -> pd.DataFrame:
    # Integers with nulls stay Python ints (not floats): counts such as gpu_count must not print as 2.0.
    return con.execute(sql, params or []).to_arrow_table().to_pandas(integer_object_nulls=True)
