"""int_gpu_usage_hourly rebuilds the days of rows matched to a GPU bill line that is gone by the days whose GPU
bill hours changed (x_bill_digest, macros/bill_charge_days.sql), not by a look at every row's line.

On a copy of the sample ledger (GPU bill hours of the sample FOCUS bill on 2025-04-14 and 2025-04-15; on
each day two lines, 192 usage rows each, are the fleet identity of usage, the others match no host):
- line ...:2 (2025-04-14, matched by 192 usage rows) is gone;
- line ...:9 (2025-04-15, 6 hours, matched by no usage row) is gone: the day's bill hours changed, but no
  row of it was matched to that line.
int_gpu_usage_hourly and its history key alone are run, incrementally and with `--full-refresh` on a copy.
Expected: 2025-04-14 (its rows no longer name line :2) and 2025-04-15 are rebuilt, no other day of the 17,
and the rows (their stored bill digests included) equal the full rebuild's.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.dbt.ledger_nodes import nightly_and_full, rebuilt_periods, run_models

MODEL = "int_gpu_usage_hourly"
BILL = "91e54216ebb0472bae7a9af253630c1b8538e9c037eef159bbcb4f3a653ce6e7"
CHANGES = [f"delete from intermediate.int_gpu_billing_hours_mapped where x_charge_key in ('{BILL}:2', '{BILL}:9')"]


def _run(ledger: Path, *extra: str) -> None:
    """Run the model and its history key (one dbt command) on `ledger`; asserts success."""
    run_models(ledger, [MODEL, "int_usage_history_key"], *extra)


def _read(ledger: Path) -> dict:
    con = duckdb.connect(str(ledger), read_only=True)
    try:
        return {
            "days": {str(d): (n, stamp) for d, n, stamp in con.execute(
                f"select usage_date, count(*), max(x_built_at) from intermediate.{MODEL} group by all").fetchall()},
            "rows": con.execute(f"select * exclude (x_built_at, x_loaded_at) from intermediate.{MODEL} "
                                "order by all").fetchall(),
            "charges": dict(con.execute(
                f"select bill_charge_key, count(*) from intermediate.{MODEL} where bill_charge_key is not null "
                "group by all").fetchall()),
        }
    finally:
        con.close()


@pytest.fixture(scope="module")
def steps(sample_run: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    assert sample_run["ok"], sample_run["reason"]
    base = tmp_path_factory.mktemp("bill_gone")
    return nightly_and_full(Path(sample_run["home"]), base, CHANGES, _run, _read)


def test_the_days_whose_bill_hours_changed_alone_are_rebuilt(steps: dict) -> None:
    assert steps["before"]["charges"][f"{BILL}:2"] == 192
    assert f"{BILL}:9" not in steps["before"]["charges"]
    # 2025-04-14: its rows named line :2; 2025-04-15: its bill hours changed (line :9), its rows did not
    assert rebuilt_periods(steps["before"]["days"], steps["after"]["days"]) == ["2025-04-14", "2025-04-15"]
    assert len(steps["after"]["days"]) == 17
    assert f"{BILL}:2" not in steps["after"]["charges"]


def test_the_rows_equal_a_full_rebuild(steps: dict) -> None:
    assert steps["after"]["rows"] == steps["full"]["rows"]
    assert steps["after"]["rows"] != steps["before"]["rows"]
