"""int_gpu_node_hours is incremental by UTC day (macros/node_hours.sql, interval_day_digests): a run
rebuilds the days whose pool windows or node bill hours changed, and its rows equal a full rebuild.

On a copy of the sample ledger (scontrol pool `slurm:(default)`: 40 nodes, node hours on 2024-04-03..19,
so 40 x 24 = 960 rows a day) the model's inputs are changed and the model alone is run, incrementally and
with `--full-refresh` on a copy of the same ledger:
1. next day: a Slurm job of the pool on 2024-04-21 10:00-11:00 extends the window by two days (the 20th
   has no job, yet a listed node exists every day of the window), and a GPU bill line on node a100gpu1 on
   2024-04-05 10:00 (a restated bill for an earlier day) takes that node-hour from the node: the run
   rebuilds the 5th (959 rows), the 20th and the 21st (960 each) and no other day;
2. the job and the bill line gone again (restated away): the 20th and 21st are deleted, the 5th is
   rebuilt (960 rows), no other day.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.dbt.ledger_nodes import change, copy_ledger, rebuilt_periods, run_model

MODEL = "int_gpu_node_hours"
RESTATED, GAP, NEXT = "2024-04-05", "2024-04-20", "2024-04-21"


def _days(ledger: Path) -> dict[str, tuple]:
    """Per day: rows and build stamp."""
    con = duckdb.connect(str(ledger), read_only=True)
    try:
        return {str(d): (n, stamp) for d, n, stamp in con.execute(
            f"select day, count(*), max(x_built_at) from intermediate.{MODEL} group by day").fetchall()}
    finally:
        con.close()


def _rows(ledger: Path) -> list[tuple]:
    con = duckdb.connect(str(ledger), read_only=True)
    try:
        return con.execute(f"select * exclude (x_built_at) from intermediate.{MODEL} order by all").fetchall()
    finally:
        con.close()


NEXT_DAY = [
    "insert into intermediate.int_gpu_jobs_attributed select * replace ('slurm:(default):next-day' as job_key, "
    f"'{NEXT} 10:00:00'::timestamp as started_at, '{NEXT} 11:00:00'::timestamp as ended_at_effective) "
    "from intermediate.int_gpu_jobs_attributed where scheduler = 'slurm' and has_gpus and cluster = '(default)' "
    "order by job_key limit 1",
    "insert into intermediate.int_gpu_billing_hours_mapped select * replace ("
    f"'{RESTATED} 10:00:00'::timestamp as hour_start, 'a100gpu1' as resource_id, 'a100gpu1' as resource_name, "
    "'restated-bill' as x_charge_key) from intermediate.int_gpu_billing_hours_mapped order by x_charge_key limit 1",
]
RESTATED_AWAY = [
    "delete from intermediate.int_gpu_jobs_attributed where job_key = 'slurm:(default):next-day'",
    "delete from intermediate.int_gpu_billing_hours_mapped where x_charge_key = 'restated-bill'",
]


@pytest.fixture(scope="module")
def steps(sample_run: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    assert sample_run["ok"], sample_run["reason"]
    base = tmp_path_factory.mktemp("node_hours")
    nightly = copy_ledger(sample_run["home"], base / "nightly")
    out = {"first": _days(nightly)}
    for name, sql in (("next_day", NEXT_DAY), ("restated_away", RESTATED_AWAY)):
        change(nightly, sql)
        full = copy_ledger(nightly.parent, base / f"full-{name}")
        run_model(nightly, MODEL)
        run_model(full, MODEL, "--full-refresh")
        out[name] = {"days": _days(nightly), "rows": _rows(nightly), "full_rows": _rows(full)}
    return out


def test_the_sample_pool_has_960_node_hours_a_day(steps: dict) -> None:
    first = steps["first"]
    assert (min(first), max(first)) == ("2024-04-03", "2024-04-19")
    assert {n for n, _ in first.values()} == {960}  # 40 nodes x 24 hours


def test_a_next_day_and_a_restated_earlier_bill_rebuild_exactly_their_days(steps: dict) -> None:
    step = steps["next_day"]
    assert rebuilt_periods(steps["first"], step["days"]) == [RESTATED, GAP, NEXT]
    assert step["days"][RESTATED][0] == 959  # a100gpu1's 10:00 hour is the bill's capacity
    assert step["days"][GAP][0] == step["days"][NEXT][0] == 960
    assert step["rows"] == step["full_rows"]


def test_days_restated_away_are_deleted_and_the_rest_equals_a_full_rebuild(steps: dict) -> None:
    step = steps["restated_away"]
    assert rebuilt_periods(steps["next_day"]["days"], step["days"]) == [RESTATED]
    assert GAP not in step["days"] and NEXT not in step["days"]
    assert step["days"][RESTATED][0] == 960
    assert step["rows"] == step["full_rows"]
