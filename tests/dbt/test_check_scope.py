"""A nightly check reads the days built since it last passed, and still sees an impossible number there.

assert_gpu_hours_not_double_counted reads the rows of int_gpu_usage_hourly whose build stamp
(`x_built_at`) is later than the check's last pass in audit.check_results (macro
built_since_last_pass in dbt/macros/check_scope.sql). On a copy of the sample ledger, two usage days
are stamped as if a passing check ran between their builds (the earlier day built before it, the
later one after), and each gets one doctored row: a GPU allocated 2 GPU-hours in one hour.
- Nightly scope: only the later day's doctored row is found (the earlier day passed and no build
  touched it since), also when a failing run came after the pass (a failure does not move the scope).
- `--full-refresh`: every day is read, both doctored rows are found.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.dbt.ledger_nodes import copy_ledger, run_checks

CHECK = "assert_gpu_hours_not_double_counted"
BUILT_BEFORE, PASSED, BUILT_AFTER, FAILED = ("2026-01-01 00:00:00", "2026-01-02 00:00:00",
                                             "2026-01-03 00:00:00", "2026-01-04 00:00:00")


def _run_check(ledger: Path, *extra: str, command: str = "test") -> tuple[str, set[str]]:
    """The check's dbt status and the days of the hours its compiled SQL returns (one dbt invocation)."""
    status, names, rows = run_checks(ledger, (CHECK,), *extra, target=ledger.parent / "target",
                                     command=command)[CHECK]
    return status, {str(r[names.index("hour_start")].date()) for r in rows}


@pytest.fixture(scope="module")
def doctored(sample_run: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Copies of the sample ledger with the two stamped days and their doctored rows (module doc)."""
    assert sample_run["ok"], sample_run["reason"]
    base = tmp_path_factory.mktemp("check_scope")
    ledger = copy_ledger(sample_run["home"], base / "nightly")
    con = duckdb.connect(str(ledger))
    try:
        # the two earliest days with per-GPU telemetry rows; every row of a day carries its day's stamp
        earlier, later = [str(r[0]) for r in con.execute(
            "select distinct usage_date from intermediate.int_gpu_usage_hourly where gpu_uuid is not null "
            "order by 1 limit 2").fetchall()]
        con.execute("update intermediate.int_gpu_usage_hourly set x_built_at = case when usage_date = ? "
                    "then ?::timestamp else ?::timestamp end", [later, BUILT_AFTER, BUILT_BEFORE])
        for day in (earlier, later):  # one GPU allocated 2 GPU-hours in one hour: impossible
            con.execute("update intermediate.int_gpu_usage_hourly set allocated_gpu_hours = 2 "
                        "where (gpu_key, hour_start, allocation_key) = (select (gpu_key, hour_start, allocation_key) "
                        "from intermediate.int_gpu_usage_hourly where usage_date = ? and gpu_uuid is not null "
                        "order by all limit 1)", [day])
        con.execute("delete from audit.check_results where check_name = ?", [CHECK])
        con.execute("insert into audit.check_results (run_id, check_name, target, severity, passed, detail, "
                    "checked_at, status) values ('r-pass', ?, 'dbt', 'error', true, '', ?::timestamp, 'pass'), "
                    "('r-fail', ?, 'dbt', 'error', false, '', ?::timestamp, 'fail')", [CHECK, PASSED, CHECK, FAILED])
    finally:
        con.close()
    full = copy_ledger(ledger.parent, base / "full")
    return {"earlier": earlier, "later": later,
            "nightly": _run_check(ledger),
            "full": _run_check(full, "--full-refresh", command="build")}


def test_the_nightly_check_fails_on_an_impossible_row_of_a_day_built_since_it_passed(doctored: dict) -> None:
    status, days = doctored["nightly"]
    assert status == "fail"
    # the earlier day's doctored row is not read: that day passed and no build touched it since
    assert days == {doctored["later"]}


def test_a_full_refresh_checks_every_day(doctored: dict) -> None:
    status, days = doctored["full"]
    assert status == "fail"
    assert days == {doctored["earlier"], doctored["later"]}
