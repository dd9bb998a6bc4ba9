"""fct_gpu_utilisation_daily follows the changed days: int_gpu_utilisation_daily, the rows it publishes, is
incremental by UTC day (macros/utilisation_days.sql): a run rebuilds the days whose inputs changed, deletes
the days no input holds any more, and its rows equal a `--full-refresh` build of the same inputs.

On a copy of the sample ledger the model's three inputs are changed by hand and the model alone is run,
incrementally and with `--full-refresh` on a copy:
- int_gpu_usage_hourly rewrites 2024-04-05 (a new build stamp on the day, one row 1 used GPU-hour more);
- int_gpu_idle_hourly has 1 unallocated GPU-hour more on one capacity row of 2024-04-10 (it keeps no build
  stamp: the day's row hash moves);
- int_gpu_billing_hours_mapped has 1 billed GPU-hour more on one bill line's hour of 2024-09-24;
- 2024-09-12 is emptied: its usage, idle and billed hours are gone (a restated input).
Expected: exactly 2024-04-05, 2024-04-10 and 2024-09-24 are rebuilt, 2024-09-12 is deleted, every other day
keeps its rows and build stamp.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from tests.dbt.ledger_nodes import nightly_and_full, rebuilt_periods, run_model

MODEL = "int_gpu_utilisation_daily"
USAGE_DAY, IDLE_DAY, BILL_DAY, EMPTIED_DAY = "2024-04-05", "2024-04-10", "2024-09-24", "2024-09-12"
CHANGES = [
    f"update intermediate.int_gpu_usage_hourly set x_built_at = now() where usage_date = '{USAGE_DAY}'",
    "update intermediate.int_gpu_usage_hourly set used_gpu_hours = used_gpu_hours + 1 where rowid = ("
    f"select min(rowid) from intermediate.int_gpu_usage_hourly where usage_date = '{USAGE_DAY}')",
    "update intermediate.int_gpu_idle_hourly set unallocated_gpu_hours = unallocated_gpu_hours + 1 "
    "where rowid = (select min(rowid) from intermediate.int_gpu_idle_hourly "
    f"where cast(hour_start as date) = '{IDLE_DAY}' and capacity_basis in ('inventory', 'telemetry') "
    "and unallocated_gpu_hours > 0)",
    "update intermediate.int_gpu_billing_hours_mapped set billed_gpu_hours = billed_gpu_hours + 1 where rowid = ("
    f"select min(rowid) from intermediate.int_gpu_billing_hours_mapped where cast(hour_start as date) = '{BILL_DAY}')",
    f"delete from intermediate.int_gpu_usage_hourly where usage_date = '{EMPTIED_DAY}'",
    f"delete from intermediate.int_gpu_idle_hourly where cast(hour_start as date) = '{EMPTIED_DAY}'",
    f"delete from intermediate.int_gpu_billing_hours_mapped where cast(hour_start as date) = '{EMPTIED_DAY}'",
]


def _read(ledger: Path) -> dict:
    con = duckdb.connect(str(ledger), read_only=True)
    try:
        return {
            "days": {str(d): (n, stamp) for d, n, stamp in con.execute(
                f"select day, count(*), max(x_built_at) from intermediate.{MODEL} group by day").fetchall()},
            "rows": con.execute(f"select * exclude (x_built_at) from intermediate.{MODEL} order by all").fetchall(),
            "sums": {str(d): (used, billed, unallocated) for d, used, billed, unallocated in con.execute(
                f"select day, sum(used_gpu_hours), sum(billed_gpu_hours), sum(unallocated_gpu_hours) "
                f"from intermediate.{MODEL} group by day").fetchall()},
        }
    finally:
        con.close()


@pytest.fixture(scope="module")
def steps(sample_run: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    assert sample_run["ok"], sample_run["reason"]
    base = tmp_path_factory.mktemp("utilisation")
    return nightly_and_full(Path(sample_run["home"]), base, CHANGES,
                            lambda ledger, *extra: run_model(ledger, MODEL, *extra), _read)


def test_exactly_the_changed_days_are_rebuilt_and_the_emptied_one_deleted(steps: dict) -> None:
    before, after = steps["before"]["days"], steps["after"]["days"]
    assert len(before) > 20 and before[EMPTIED_DAY][0] > 0
    assert rebuilt_periods(before, after) == [USAGE_DAY, IDLE_DAY, BILL_DAY]  # every other day unchanged
    assert sorted(set(before) - set(after)) == [EMPTIED_DAY]


def test_the_changes_are_in_the_rebuilt_days(steps: dict) -> None:
    before, after = steps["before"]["sums"], steps["after"]["sums"]
    one = Decimal("1")
    # one usage row 1 used GPU-hour more: the day's used hours +1
    assert after[USAGE_DAY][0] - before[USAGE_DAY][0] == one
    # one capacity pool's unallocated hour +1: it goes to '(unallocated)' as billed capacity and unallocated
    assert after[IDLE_DAY][1] - before[IDLE_DAY][1] == one
    assert after[IDLE_DAY][2] - before[IDLE_DAY][2] == one
    # one bill line's hour 1 billed GPU-hour more: the day's billed hours +1
    assert after[BILL_DAY][1] - before[BILL_DAY][1] == one


def test_the_rows_equal_a_full_rebuild(steps: dict) -> None:
    assert steps["after"]["rows"] == steps["full"]["rows"]
    assert steps["after"]["rows"] != steps["before"]["rows"]
