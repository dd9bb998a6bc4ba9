"""A run priced in the month it starts is rebuilt when a later month changes only if the change falls on a
day the run reaches (macros/incremental_months.sql months_reaching by day, from the day digests
int_workload_cost_lines stores as of its last build), not on every change of the later month.

On a copy of the sample ledger (cost lines in 2025-03 and 2025-04), a training run crossing the month
boundary is added, 2025-03-31 20:00 -> 2025-04-01 04:00 (a copy of `tr-2025-04-chatft-01`, 8 GPUs; it is
priced in March, where it makes its workload active), and int_workload_cost_lines is built with
--full-refresh. Then, one step each, run incrementally and compared with a --full-refresh of a copy of the
same inputs:
1. a late API request on 2025-04-16 12:00 (file `late-mid-april`), after the run ended: April alone is
   rebuilt (reaching by month rebuilt March too, as the run reaches into April);
2. a late API request on 2025-04-01 02:00 (file `late-first-night`), inside the run: April and March;
3. that request restated away (its rows gone): 2025-04-01 loses the file's stamp and gains none, so its
   digest differs from the stored one with no newer stamp on the day: again April and March.
Each step's rows (less the build stamp) equal the full rebuild's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import prefetch
from tests.dbt.ledger_nodes import change, copy_ledger, query, rebuilt_periods, run_models

MODEL = "int_workload_cost_lines"
CROSSING_RUN = [
    "insert into raw.training_runs select * replace ('tr-cross-month' as run_id, "
    "'2025-03-31 20:00:00'::timestamp as started_at, '2025-04-01 04:00:00'::timestamp as ended_at, "
    "8.0 as wall_hours, 9999 as _source_line) from raw.training_runs where run_id = 'tr-2025-04-chatft-01'",
]


def _late_request(request_id: str, at: str, file_hash: str) -> list[str]:
    """A request of workload `code-agent`, 0.50 USD, at `at`, in a file of its own."""
    return [
        "insert into intermediate.int_api_requests_allocated select * replace ("
        f"'{request_id}' as request_id, '{at}'::timestamp as started_at, "
        f"'{at}'::timestamp + interval 1 second as ended_at, 'code-agent' as workload_tag, "
        "0.50::decimal(38, 12) as spend, 'USD' as currency, 'success' as status, "
        f"'{file_hash}' as x_file_hash, cast('{at}'::timestamp as date) as x_request_day) "
        "from intermediate.int_api_requests_allocated where workload_tag = 'code-agent' order by request_id limit 1"
    ]


STEPS = {
    "after_the_run": _late_request("late-mid-april", "2025-04-16 12:00:00", "late-mid-april"),
    "inside_the_run": _late_request("late-first-night", "2025-04-01 02:00:00", "late-first-night"),
    "restated_away": ["delete from intermediate.int_api_requests_allocated where request_id = 'late-first-night'"],
}


def _state(ledger: Path) -> dict:
    """Per month of the cost lines: rows, build stamp, total; the rows less the build stamp; the days of the
    stored day digests."""
    months = query(ledger, f"select cast(period as string), count(*), max(x_built_at), sum(amount) "
                           f"from intermediate.{MODEL} group by period")
    return {"months": {m: (n, stamp, total) for m, n, stamp, total in months},
            "rows": query(ledger, f"select * exclude (x_built_at) from intermediate.{MODEL} order by all"),
            # the workload of the run, active in March only on the run's evening
            "march_lines": query(ledger, f"select component, detail from intermediate.{MODEL} "
                                         "where workload_id = 'chat-ft-llama8b' and period = '2025-03-01' "
                                         "and source_kind = 'registry_assumption' order by all"),
            "stored_days": [str(r[0]) for r in query(
                ledger, f"select day from intermediate.{MODEL}__day_digests order by day")]}


def build_steps(base: Path, sample_run: dict) -> dict:
    """The crossing run and each step, built as a night and as a full rebuild (a tests/prefetch.py job, after the
    sample refresh)."""
    assert sample_run["ok"], sample_run["reason"]
    nightly = copy_ledger(sample_run["home"], base / "nightly")
    change(nightly, CROSSING_RUN)
    run_models(nightly, [MODEL], "--full-refresh")
    out = {"first": _state(nightly)}
    for name, sql in STEPS.items():
        change(nightly, sql)
        full = copy_ledger(nightly.parent, base / f"full-{name}")
        run_models(nightly, [MODEL])
        run_models(full, [MODEL], "--full-refresh")
        out[name] = {"nightly": _state(nightly), "full": _state(full)}
    return out


@pytest.fixture(scope="module")
def reach_steps(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("cost_months_reach", tmp_path_factory)


def test_the_crossing_run_is_priced_in_march(reach_steps: dict) -> None:
    first = reach_steps["first"]
    assert sorted(first["months"]) == ["2025-03-01", "2025-04-01"]
    # chat-ft-llama8b has no sample run in March: the crossing run makes it active on 1 day of 31 there,
    # so March carries its registry estimates prorated so (storage, network)
    assert [c for c, _ in first["march_lines"]] == ["network", "storage"]
    assert all(detail.endswith(" x 1/31 active days") for _, detail in first["march_lines"])
    # the stored digests hold the stamped days: the first night of April (usage) and the API's days
    assert {"2025-04-01", "2025-04-14", "2025-04-15", "2025-04-16"} <= set(first["stored_days"])


@pytest.mark.parametrize("name,previous,months", [
    ("after_the_run", "first", ["2025-04-01"]),
    ("inside_the_run", "after_the_run", ["2025-03-01", "2025-04-01"]),
    ("restated_away", "inside_the_run", ["2025-03-01", "2025-04-01"]),
])
def test_a_later_change_rebuilds_the_month_of_a_run_only_on_a_day_it_reaches(
        reach_steps: dict, name: str, previous: str, months: list[str]) -> None:
    before = reach_steps[previous] if previous == "first" else reach_steps[previous]["nightly"]
    step = reach_steps[name]
    assert rebuilt_periods(before["months"], step["nightly"]["months"]) == months
    assert step["nightly"]["rows"] == step["full"]["rows"]
    assert step["nightly"]["stored_days"] == step["full"]["stored_days"]
