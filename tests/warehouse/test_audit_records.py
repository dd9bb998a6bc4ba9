"""Check outcomes in the audit schema (warehouse/audit.py): many outcomes recorded at once replace the same
run's earlier outcomes of the same checks and nothing else, and audit.check_failures keeps a bounded history
(the rows of recent runs, and each check's latest rows whatever their age)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from warehouse.audit import (
    KEEP_DAYS_VAR,
    CheckOutcome,
    failing_rows_keep_days,
    prune_failing_rows,
    record_check,
    record_checks,
)
from warehouse.home import connect_ledger


@pytest.fixture
def con(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    c = connect_ledger(tmp_path / "ledger.duckdb")
    yield c
    c.close()


def _results(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    return con.execute("select run_id, check_name, target, status, passed, detail, rules_digest "
                       "from audit.check_results order by all").fetchall()


def _failures(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    return con.execute("select run_id, check_name, target, row_number, failing_row "
                       "from audit.check_failures order by all").fetchall()


def test_recording_again_replaces_only_that_runs_outcomes_of_those_checks(con: duckdb.DuckDBPyConnection) -> None:
    record_check(con, "run-1", "a", "dbt", "warn", "warn", "2 rows", ['{"x": 1}', '{"x": 2}'])
    record_check(con, "run-1", "b", "marts.t", "error", "pass", "ok")
    record_check(con, "run-0", "a", "dbt", "warn", "warn", "1 row", ['{"x": 0}'])
    record_checks(con, "run-1", [
        CheckOutcome("a", "dbt", "warn", "pass", "0 rows", rules_digest="d1"),  # a of run-1: its rows go
        CheckOutcome("c", "dbt", "error", "fail", "1 row", ['{"y": 9}']),
    ])
    assert _results(con) == [
        ("run-0", "a", "dbt", "warn", False, "1 row", None),  # another run: kept
        ("run-1", "a", "dbt", "pass", True, "0 rows", "d1"),  # replaced
        ("run-1", "b", "marts.t", "pass", True, "ok", None),  # not recorded again: kept
        ("run-1", "c", "dbt", "fail", False, "1 row", None),
    ]
    assert _failures(con) == [("run-0", "a", "dbt", 1, '{"x": 0}'), ("run-1", "c", "dbt", 1, '{"y": 9}')]


def test_an_unknown_status_is_refused_before_anything_is_written(con: duckdb.DuckDBPyConnection) -> None:
    record_check(con, "run-1", "a", "dbt", "warn", "pass", "ok")
    with pytest.raises(ValueError, match="'skipped'"):
        record_checks(con, "run-1", [CheckOutcome("a", "dbt", "warn", "fail", "x"),
                                     CheckOutcome("b", "dbt", "warn", "skipped", "x")])
    assert _results(con) == [("run-1", "a", "dbt", "pass", True, "ok", None)]


def _run(con: duckdb.DuckDBPyConnection, run_id: str, days_ago: int, found: dict[str, int]) -> None:
    """A run `days_ago` days back whose checks found `found[check]` rows each (0: the check passed)."""
    record_checks(con, run_id, [CheckOutcome(check, "dbt", "warn", "warn" if n else "pass", f"{n} rows",
                                             [f'{{"n": {i}}}' for i in range(n)]) for check, n in found.items()])
    con.execute("update audit.check_results set checked_at = current_timestamp::timestamp - to_days(?) "
                "where run_id = ?", [days_ago, run_id])


def test_failing_rows_of_old_runs_are_pruned_but_each_checks_latest_rows_stay(con: duckdb.DuckDBPyConnection) -> None:
    _run(con, "old", 40, {"a": 3, "b": 4, "c": 2, "d": 5})
    _run(con, "mid", 10, {"c": 1})
    _run(con, "new", 0, {"a": 2, "d": 0})
    # Kept for 35 days: "old" is older. a's rows of "old" (3) and c's (2) go: each check has later rows.
    # b's 4 rows of "old" are b's latest, and so are d's 5 (d passed in "new", finding no row): they stay.
    assert prune_failing_rows(con, keep_days=35) == 3 + 2
    left = con.execute("select run_id, check_name, count(*) from audit.check_failures group by all "
                       "order by all").fetchall()
    assert left == [("mid", "c", 1), ("new", "a", 2), ("old", "b", 4), ("old", "d", 5)]
    assert prune_failing_rows(con, keep_days=35) == 0  # nothing older left that a later run supersedes
    # 5 days: "mid" (10 days) is old too, but its rows are c's latest.
    assert prune_failing_rows(con, keep_days=5) == 0
    assert con.execute("select count(*) from audit.check_results").fetchone()[0] == 4 + 1 + 2  # outcomes stay


def test_nothing_is_pruned_within_the_days_kept(con: duckdb.DuckDBPyConnection) -> None:
    _run(con, "old", 40, {"a": 3})
    _run(con, "new", 0, {"a": 2})
    assert prune_failing_rows(con, keep_days=50) == 0
    assert con.execute("select count(*) from audit.check_failures").fetchone()[0] == 3 + 2


def test_the_days_kept_come_from_the_environment_and_a_bad_value_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEEP_DAYS_VAR, raising=False)
    assert failing_rows_keep_days() == 35
    monkeypatch.setenv(KEEP_DAYS_VAR, " 90 ")
    assert failing_rows_keep_days() == 90
    for bad in ("-1", "a month", "7.5"):
        monkeypatch.setenv(KEEP_DAYS_VAR, bad)
        with pytest.raises(ValueError, match=f"{KEEP_DAYS_VAR} must be a whole number of days.*{bad!r}"):
            failing_rows_keep_days()
