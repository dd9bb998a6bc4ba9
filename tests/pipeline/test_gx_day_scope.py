"""GX on a night, for a mart published by day (pipelines/defs/quality/checks.py `rebuilt_rows`): a suite that
passed in the publication in place reads the rows of the days its upstream rebuilt since it last passed, and
still fails on a bad row of such a day.

A hand-made ledger: `intermediate.up` (a day-incremental model: day and build stamp) and `marts.m` (its
projection: 1,000 rows on each of January 1-10, 2026, currency USD). Days 1-9 are built, the suite passes,
then day 10 is rebuilt.
"""

from __future__ import annotations

import time
from pathlib import Path

import duckdb
import pytest

from pipelines.defs.quality.checks import rebuilt_rows
from warehouse.audit import ensure_audit, record_check
from warehouse.expectations import Suite, run_suite
from warehouse.publish_days import DayScope

SUITE = Suite("m", (("ExpectColumnValuesToBeInSet", {"column": "currency", "value_set": ["USD", "EUR"]}),),
              blocking=False, sample_rows=20_000)
SCOPES = {"m": DayScope(column="charged_at", upstream="intermediate.up", upstream_day="day")}
PASSED = {(SUITE.check_name, SUITE.target)}


def _build(con: duckdb.DuckDBPyConnection, days: list[int]) -> None:
    listed = ", ".join(f"date '2026-01-{d:02d}'" for d in days)
    con.execute(f"delete from intermediate.up where day in ({listed})")
    con.execute(f"insert into intermediate.up select unnest([{listed}]), cast(now() as timestamp)")
    con.execute(f"delete from marts.m where cast(charged_at as date) in ({listed})")
    con.execute(f"insert into marts.m select d + to_minutes(r.range), 'USD' from (select unnest([{listed}]) as d), "
                "range(1000) as r")


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "ledger.duckdb"
    con = duckdb.connect(str(path))
    try:
        con.execute("set TimeZone = 'UTC'")
        ensure_audit(con)
        con.execute("create schema intermediate")
        con.execute("create schema marts")
        con.execute("create table intermediate.up (day date, x_built_at timestamp)")
        con.execute("create table marts.m (charged_at timestamp, currency varchar)")
        _build(con, list(range(1, 10)))
        time.sleep(0.002)
        record_check(con, "run-1", SUITE.check_name, SUITE.target, "warn", "pass", "ok")
        time.sleep(0.002)
        _build(con, [10])
    finally:
        con.close()
    return path


def _run(db: Path, doctor: str | None = None, passed: set | None = PASSED) -> tuple[bool, dict]:
    con = duckdb.connect(str(db))
    try:
        con.execute("set TimeZone = 'UTC'")
        if doctor:
            con.execute(doctor)
        ok, _, meta = run_suite(con, SUITE, None, rebuilt_rows(con, SUITE, SCOPES, passed))
        return ok, meta
    finally:
        con.close()


def test_only_the_rebuilt_days_rows_are_read(db: Path) -> None:
    ok, meta = _run(db)
    assert ok and meta["rows"] == 1_000  # day 10 only, not the 10,000 rows of days 1-10
    assert meta["scope"] == "the rows of the 1 days rebuilt since it last passed"


def test_a_bad_row_on_a_rebuilt_day_fails_and_one_on_an_earlier_day_is_not_read_again(db: Path) -> None:
    # a day the suite passed, not rebuilt since: not read again (read whole, it fails)
    passed, _ = _run(db, "update marts.m set currency = 'GBP' where charged_at = timestamp '2026-01-03 00:07'")
    assert passed
    ok, meta = _run(db, passed=set())  # the suite did not pass in the publication in place
    assert not ok and meta["rows"] == 10_000 and not meta.get("scope")
    passed, _ = _run(db, "update marts.m set currency = 'USD'; "
                         "update marts.m set currency = 'GBP' where charged_at = timestamp '2026-01-10 00:07'")
    assert not passed  # day 10 was rebuilt since the pass: its bad row is read and fails the suite


def test_without_a_pass_record_every_row_is_read(db: Path) -> None:
    ok, meta = _run(db, "delete from audit.check_results")
    assert ok and meta["rows"] == 10_000 and not meta.get("scope")
