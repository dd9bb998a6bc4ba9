"""What the hand-derived golden cases (tests/golden*/) share: one refresh of an inputs folder into a
fresh home (a tests/prefetch.py job), the published copy opened read-only, rows as dicts, money to the cent."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path

import duckdb

CENT = Decimal("0.01")


def refresh(root: Path, inputs: Path) -> dict:
    """One refresh of `inputs` into root/home; the prefetch job's result."""
    from pipelines.cli import execute_refresh

    ok, _run_id, reason = execute_refresh(root / "home", inputs, docs=False)
    return {"home": root / "home", "ok": ok, "reason": reason}


@contextmanager
def published(run: dict) -> Iterator[duckdb.DuckDBPyConnection]:
    """The run's serving.duckdb, read-only; the refresh must have published."""
    assert run["ok"], run["reason"]
    con = duckdb.connect(str(run["home"] / "serving.duckdb"), read_only=True)
    try:
        yield con
    finally:
        con.close()


def rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict]:
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def cents(value) -> Decimal | None:
    return None if value is None else Decimal(str(value)).quantize(CENT)
