"""The idle-capacity models are incremental (macros/day_stamps.sql): int_gpu_idle_hourly by UTC day and
int_gpu_idle_by_workload by bill line start day rebuild the days whose input stamps changed, delete the ones
left without input, and their rows equal a `--full-refresh` build of the same inputs.

On a copy of the sample ledger (idle hours on 31 days; GPU bill lines of workloads starting on 2025-04-14
and 2025-04-15, each within its day) the models' inputs are changed and the models alone are run,
incrementally and with `--full-refresh` on a copy:
- int_gpu_usage_hourly rewrites 2024-04-05 (its 28 rows 1 allocated GPU-hour more each) and no longer holds
  2026-07-14 (its one telemetry row: nothing else has that day);
- GPU bill line ...:5 (search-embed, 2025-04-14, 24 rows of 1 GPU-hour) is restated by a later file at
  2 GPU-hours an hour;
- the lines starting on 2025-04-15 are gone (a re-delivery without them).
Expected: int_gpu_idle_hourly rebuilds 2024-04-05, 2025-04-14 and 2025-04-15 and deletes 2026-07-14;
int_gpu_idle_by_workload rebuilds 2025-04-14 and deletes 2025-04-15; no other day.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from tests.dbt.ledger_nodes import nightly_and_full, rebuilt_periods, run_models

MODELS = ["int_gpu_idle_hourly", "int_gpu_idle_by_workload"]
KEYS = [m + "_history_key" for m in MODELS]
LINE = "91e54216ebb0472bae7a9af253630c1b8538e9c037eef159bbcb4f3a653ce6e7:5"
GONE = "cast(ChargePeriodStart as date) = '2025-04-15' and x_workload_id is not null"
CHANGES = [
    "update intermediate.int_gpu_usage_hourly set allocated_gpu_hours = allocated_gpu_hours + 1, "
    "x_built_at = now() where usage_date = '2024-04-05'",
    "delete from intermediate.int_gpu_usage_hourly where usage_date = '2026-07-14'",
    "update intermediate.int_gpu_billing_hours_mapped set billed_gpu_hours = 2 * billed_gpu_hours, "
    f"x_file_hash = 'restated-bill' where x_charge_key = '{LINE}'",
    f"delete from intermediate.int_gpu_billing_hours_mapped where x_charge_key in "
    f"(select x_charge_key from marts.ledger_focus where {GONE})",
    f"delete from marts.ledger_focus where {GONE}",
]


def _run(ledger: Path, *extra: str) -> None:
    """Run the models and their history keys (alone, one dbt command) on `ledger`; asserts success."""
    run_models(ledger, [*MODELS, *KEYS], *extra)


def _read(ledger: Path) -> dict:
    con = duckdb.connect(str(ledger), read_only=True)
    try:
        out: dict = {}
        for model in MODELS:
            out[model] = {str(d): (n, stamp) for d, n, stamp in con.execute(
                f"select day, count(*), max(x_built_at) from intermediate.{model} group by all").fetchall()}
            out[model + ":rows"] = con.execute(
                f"select * exclude (x_built_at, x_loaded_at) from intermediate.{model} order by all").fetchall()
        out["allocated"] = dict(con.execute(
            "select day::varchar, sum(allocated_gpu_hours) from intermediate.int_gpu_idle_hourly group by all").fetchall())
        out["billed"] = dict(con.execute(
            "select day::varchar || ' ' || workload_id, billed_gpu_hours from intermediate.int_gpu_idle_by_workload").fetchall())
        return out
    finally:
        con.close()


@pytest.fixture(scope="module")
def steps(sample_run: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    assert sample_run["ok"], sample_run["reason"]
    base = tmp_path_factory.mktemp("idle")
    return nightly_and_full(Path(sample_run["home"]), base, CHANGES, _run, _read)


def _rebuilt_and_gone(steps: dict, model: str) -> tuple[list[str], list[str]]:
    """The model's (days stamped after every stamp before, days gone); every other day keeps its rows and stamp."""
    before, after = steps["before"][model], steps["after"][model]
    return rebuilt_periods(before, after), sorted(set(before) - set(after))


def test_the_idle_hours_rebuild_the_changed_days_only(steps: dict) -> None:
    model = "int_gpu_idle_hourly"
    assert len(steps["before"][model]) == 31
    assert _rebuilt_and_gone(steps, model) == (
        ["2024-04-05", "2025-04-14", "2025-04-15"], ["2026-07-14"])


def test_the_workload_idle_rebuilds_the_changed_start_days_only(steps: dict) -> None:
    model = "int_gpu_idle_by_workload"
    assert sorted(steps["before"][model]) == ["2025-04-14", "2025-04-15"]
    assert _rebuilt_and_gone(steps, model) == (["2025-04-14"], ["2025-04-15"])


def test_the_changes_are_there(steps: dict) -> None:
    before, after = steps["before"], steps["after"]
    # 28 usage rows of 2024-04-05, 1 allocated GPU-hour more each: +28
    assert after["allocated"]["2024-04-05"] - before["allocated"]["2024-04-05"] == Decimal("28")
    # line :5 ran 24 hours at 1 GPU-hour an hour, restated at 2: 24 -> 48 billed GPU-hours on its start day
    assert before["billed"]["2025-04-14 search-embed"] == Decimal("24")
    assert after["billed"]["2025-04-14 search-embed"] == Decimal("48")
    assert not [k for k in after["billed"] if k.startswith("2025-04-15")]


@pytest.mark.parametrize("model", MODELS)
def test_the_rows_equal_a_full_rebuild(steps: dict, model: str) -> None:
    assert steps["after"][model + ":rows"] == steps["full"][model + ":rows"]
    assert steps["after"][model + ":rows"] != steps["before"][model + ":rows"]
