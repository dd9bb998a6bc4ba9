"""int_gpu_usage_unbilled deletes a day whose usage was restated away.

dbt's delete+insert replaces only the days the rebuild gives rows, so a day whose allocated GPU-hours all
moved away (a restated accounting file) would keep its old unbilled rows: GPU-hours counted on a day
nothing ran. On a copy of the sample ledger, the allocated hours of the last usage day are removed from
int_gpu_usage_hourly and the model alone is run incrementally: that day has no row any more, every other
day keeps its rows and build stamp, and the rows equal a `--full-refresh` build of the same inputs.
"""

from __future__ import annotations

import pytest

from tests.dbt.ledger_nodes import change, copy_ledger, query, run_model

MODEL = "int_gpu_usage_unbilled"


@pytest.fixture(scope="module")
def restated(sample_run: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    assert sample_run["ok"], sample_run["reason"]
    base = tmp_path_factory.mktemp("unbilled_emptied")
    nightly = copy_ledger(sample_run["home"], base / "nightly")
    days = f"select day, count(*), max(x_built_at) from intermediate.{MODEL} group by day order by day"
    before = {str(d): (n, stamp) for d, n, stamp in query(nightly, days)}
    last = max(before)
    change(nightly, [f"delete from intermediate.int_gpu_usage_hourly where usage_date = '{last}'"])
    full = copy_ledger(nightly.parent, base / "full")
    run_model(nightly, MODEL)
    run_model(full, MODEL, "--full-refresh")
    rows = f"select * exclude (x_built_at) from intermediate.{MODEL} order by all"
    return {"last": last, "before": before,
            "after": {str(d): (n, stamp) for d, n, stamp in query(nightly, days)},
            "rows": query(nightly, rows), "full_rows": query(full, rows)}


def test_the_emptied_day_has_no_rows_and_no_other_day_changed(restated: dict) -> None:
    before, after, last = restated["before"], restated["after"], restated["last"]
    assert len(before) > 1 and before[last][0] > 0
    assert last not in after
    assert after == {d: v for d, v in before.items() if d != last}


def test_the_rows_equal_a_full_rebuild(restated: dict) -> None:
    assert restated["rows"] == restated["full_rows"]
