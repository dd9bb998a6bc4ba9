"""What the hand-derived golden cases (tests/golden*/) share: one refresh of an inputs folder into a
fresh home (a tests/prefetch.py job), the published copy opened read-only, rows as dicts, money to the cent,
tables compared row by row within a tolerance (`differences`)."""

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


def dec(value) -> Decimal | None:
    return None if value is None else Decimal(str(value))



def differences(got: dict, expected: dict, tolerance: Decimal) -> list[str]:
    """Rows (key -> {column: value}) that differ: a missing or extra key, or a value further than
    `tolerance` from the expected one (None only equals None). Empty when the tables agree."""
    out = [f"missing row {k}" for k in expected.keys() - got.keys()]
    out += [f"extra row {k}: {got[k]}" for k in got.keys() - expected.keys()]
    for key in expected.keys() & got.keys():
        for column, want in expected[key].items():
            have = got[key][column]
            if want is None or have is None:
                ok = want is None and have is None
            else:
                ok = abs(dec(have) - dec(want)) <= tolerance
            if not ok:
                out.append(f"{key} {column}: got {have}, expected {want}")
    return sorted(out)
