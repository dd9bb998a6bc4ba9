"""A rebuilt mart published by day (warehouse/publish_days.py): only the days its day-incremental
upstream restamped since the publication in place read the ledger, and the days one side lacks, are
replaced in the new file; the result equals a whole publication of the same ledger, row for row.

A hand-made ledger: `intermediate.up` (a day-incremental model: day, build stamp, rows) and
`marts.m`, its projection without the bookkeeping columns (as fct_focus_export is of
int_focus_export_rows), plus `marts.other`, a mart the nights do not rebuild.
"""

from __future__ import annotations

import time
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import pytest

from warehouse.audit import ensure_audit, record_check
from warehouse.publish import publish
from warehouse.publish_days import DayScope, in_days

SCOPE = {"m": DayScope(column="charged_at", upstream="intermediate.up", upstream_day="day", stamp="x_built_at")}


def _sql(path: Path, *statements: str) -> None:
    con = duckdb.connect(str(path))
    try:
        con.execute("set TimeZone = 'UTC'")
        for s in statements:
            con.execute(s)
    finally:
        con.close()


def _build_days(ledger: Path, days: list[int], amount: int) -> None:
    """The upstream rebuilds `days` of January 2026 (delete + insert, stamped now; 3 rows a day, the
    amount `amount` * row), and the mart copies those days, as the dbt models do."""
    listed = ", ".join(f"date '2026-01-{d:02d}'" for d in days)
    time.sleep(0.002)  # a later build's stamp is later than the last publication's read
    _sql(ledger,
         f"delete from intermediate.up where day in ({listed})",
         f"insert into intermediate.up select d.day, cast(now() as timestamp), d.day + to_hours(r.range * 5), "
         f"'row-' || strftime(d.day, '%d') || '-' || r.range, cast({amount} * r.range as decimal(18, 2)) "
         f"from (select unnest([{listed}]) as day) as d, range(3) as r",
         f"delete from marts.m where cast(charged_at as date) in ({listed})",
         f"insert into marts.m select row_id, charged_at, amount from intermediate.up where day in ({listed})")


def _ledger(path: Path) -> None:
    _sql(path, "create schema intermediate", "create schema marts",
         "create table intermediate.up (day date, x_built_at timestamp, charged_at timestamp, row_id varchar, "
         "amount decimal(18, 2))",
         "create table marts.m (row_id varchar, charged_at timestamp, amount decimal(18, 2))",
         "create table marts.other as select 1 as id")
    con = duckdb.connect(str(path))
    try:
        ensure_audit(con)
    finally:
        con.close()
    _build_days(path, [1, 2, 3, 4, 5], amount=10)


def _checks(ledger: Path, run: str) -> None:
    con = duckdb.connect(str(ledger))
    try:
        record_check(con, run, "suite_m", "m", "error", "pass", "ok")
    finally:
        con.close()


def _rows(serving: Path, table: str = "m") -> list[tuple]:
    con = duckdb.connect(str(serving), read_only=True)
    try:
        return con.execute(f"select * from {table} order by all").fetchall()
    finally:
        con.close()


def _whole(ledger: Path, tmp_path: Path, run: str) -> list[tuple]:
    """The mart as a whole publication of the same ledger writes it."""
    out = tmp_path / f"whole-{run}.duckdb"
    publish(ledger, out, run, datetime.now(UTC))
    return _rows(out)


@pytest.fixture
def published(tmp_path: Path) -> tuple[Path, Path]:
    ledger, serving = tmp_path / "ledger.duckdb", tmp_path / "serving.duckdb"
    _ledger(ledger)
    _checks(ledger, "run-1")
    publish(ledger, serving, "run-1", datetime.now(UTC))
    return ledger, serving


def test_a_night_replaces_only_its_days_and_equals_a_whole_publication(published: tuple[Path, Path],
                                                                       tmp_path: Path) -> None:
    ledger, serving = published
    # the night: day 3 rebuilt with new amounts, day 6 new, day 1 gone from both the upstream and the mart;
    # day 2 of the mart edited in the ledger without a rebuild (no new stamp): a day publication keeps
    # the published day 2, so the edit shows that only the changed days were written
    _build_days(ledger, [3, 6], amount=7)
    _sql(ledger, "delete from intermediate.up where day = date '2026-01-01'",
         "delete from marts.m where cast(charged_at as date) = date '2026-01-01'")
    _checks(ledger, "run-2")
    whole = _whole(ledger, tmp_path, "run-2")  # before the edit: what the ledger's rebuilt days hold
    _sql(ledger, "update marts.m set amount = -1 where cast(charged_at as date) = date '2026-01-02'")
    before = _rows(serving)
    reader = duckdb.connect(str(serving), read_only=True)  # a dashboard holding the old publication
    try:
        counts = publish(ledger, serving, "run-2", datetime.now(UTC), carry_checks=True, rebuilt={"m"},
                         by_day=SCOPE)
        # the reader still reads the publication it opened, whole; a new reader sees the new one
        assert reader.execute("select * from m order by all").fetchall() == before
    finally:
        reader.close()
    after = _rows(serving)
    assert after == whole, "the day publication differs from a whole publication of the same ledger"
    # days 2-6, 3 rows each: 5 x 3 = 15 rows; day 3's amounts are 7 x row (0, 7, 14), day 1 is gone
    assert counts["m"] == 15 and len(after) == 15
    assert [r[2] for r in after if r[1].day == 3] == [0, 7, 14]
    assert not [r for r in after if r[1].day == 1]
    assert all(r[2] != -1 for r in after)  # day 2 not stamped since: not read again
    assert _rows(serving, "other") == [(1,)]
    assert not list(tmp_path.glob(".serving.duckdb.*"))


def test_days_a_failed_refresh_rebuilt_are_replaced_by_the_next_publication(published: tuple[Path, Path],
                                                                           tmp_path: Path) -> None:
    ledger, serving = published
    _build_days(ledger, [4], amount=3)  # a refresh rebuilt day 4, then failed before publishing
    _checks(ledger, "run-2")
    _build_days(ledger, [5], amount=2)  # the next one rebuilds day 5 only, and publishes
    _checks(ledger, "run-3")
    publish(ledger, serving, "run-3", datetime.now(UTC), carry_checks=True, rebuilt={"m"}, by_day=SCOPE)
    after = _rows(serving)
    assert after == _whole(ledger, tmp_path, "run-3")
    # day 4 at 3 x row (0, 3, 6), day 5 at 2 x row (0, 2, 4)
    assert [r[2] for r in after if r[1].day == 4] == [0, 3, 6]
    assert [r[2] for r in after if r[1].day == 5] == [0, 2, 4]


def test_a_mart_is_written_whole_when_its_days_cannot_be_known(published: tuple[Path, Path], tmp_path: Path) -> None:
    ledger, serving = published
    # a publication that recorded no ledger_as_of (written before it existed): every row written again,
    # so the edit of day 2 (no new stamp) is published
    _sql(serving, "alter table publication drop column ledger_as_of")
    _sql(ledger, "update marts.m set amount = -1 where cast(charged_at as date) = date '2026-01-02'")
    _checks(ledger, "run-2")
    publish(ledger, serving, "run-2", datetime.now(UTC), carry_checks=True, rebuilt={"m"}, by_day=SCOPE)
    assert _rows(serving) == _whole(ledger, tmp_path, "run-2")
    assert [r[2] for r in _rows(serving) if r[1].day == 2] == [-1, -1, -1]
    # a mart whose columns changed: written whole, with its new column
    _sql(ledger, "alter table marts.m add column note varchar", "update marts.m set note = 'n'")
    _checks(ledger, "run-3")
    publish(ledger, serving, "run-3", datetime.now(UTC), carry_checks=True, rebuilt={"m"}, by_day=SCOPE)
    assert _rows(serving) == _whole(ledger, tmp_path, "run-3")
    assert {r[3] for r in _rows(serving)} == {"n"}


def test_the_file_does_not_grow_night_after_night(published: tuple[Path, Path]) -> None:
    ledger, serving = published
    sizes = []
    for night in range(2, 9):
        _build_days(ledger, [5], amount=night)
        _checks(ledger, f"run-{night}")
        publish(ledger, serving, f"run-{night}", datetime.now(UTC), carry_checks=True, rebuilt={"m"}, by_day=SCOPE)
        sizes.append(serving.stat().st_size)
    assert [r[2] for r in _rows(serving) if r[1].day == 5] == [0, 8, 16]  # night 8: 8 x row
    assert max(sizes) == sizes[0], sizes


def test_consecutive_days_are_one_range_of_the_column() -> None:
    days = [date(2026, 1, 3), date(2026, 1, 1), date(2026, 1, 2), date(2026, 1, 9)]
    assert in_days("at", "TIMESTAMP", days) == (
        "((\"at\" >= timestamp '2026-01-01' and \"at\" < timestamp '2026-01-04') or "
        "(\"at\" >= timestamp '2026-01-09' and \"at\" < timestamp '2026-01-10'))")
    assert in_days("d", "DATE", [date(2026, 2, 28)]) == "((\"d\" >= date '2026-02-28' and \"d\" < date '2026-03-01'))"
    assert in_days("d", "DATE", []) == "false"
    # by month: each month from its first day to the next month's (February 2028 has 29 days), consecutive
    # months as one range
    months = [date(2028, 2, 1), date(2028, 1, 1), date(2028, 12, 1)]
    assert in_days("p", "DATE", months, "month") == (
        "((\"p\" >= date '2028-01-01' and \"p\" < date '2028-03-01') or "
        "(\"p\" >= date '2028-12-01' and \"p\" < date '2029-01-01'))")
    with pytest.raises(ValueError, match="grain"):
        DayScope(column="p", upstream="i.u", upstream_day="p", grain="week")


def test_the_project_publishes_the_focus_export_by_day_and_the_cost_lines_by_month() -> None:
    from pipelines.defs.publish.assets import day_scopes

    assert day_scopes()["fct_focus_export"] == DayScope(
        column="ChargePeriodStart", upstream="intermediate.int_focus_export_rows", upstream_day="x_charge_day",
        stamp="x_built_at")
    # the cost lines by the months their model rebuilt (tests/dbt/test_cost_months_incremental.py publishes them)
    assert day_scopes()["fct_workload_cost_lines"] == DayScope(
        column="period", upstream="intermediate.int_workload_cost_lines", upstream_day="period", stamp="x_built_at",
        grain="month")
