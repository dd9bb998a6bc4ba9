"""The GPU-work chain and the FOCUS allocation splits are incremental (macros/gpu_work_days.sql,
macros/incremental_export_days.sql allocation_split_digests): a run rebuilds the UTC days (int_gpu_work_events,
int_gpu_work_priced) or billing periods (int_focus_allocation_splits) whose inputs changed, deletes the ones
left without input, and its rows equal a `--full-refresh` build of the same inputs.

On a copy of the sample ledger (GPU work on 26 days; splits in 5 billing periods) the models' inputs are
changed and the three models alone are run, incrementally and with `--full-refresh` on a copy:
- int_gpu_usage_unbilled rewrites 2024-04-05 (its 3 rows 1 GPU-hour more each) and no longer holds 2024-04-10
  (its one row deleted: a restated job moved away);
- training run tr-2025-04-lora-01 (2025-04-08, 1 GPU, 5.33 h with 3.5 checkpoint minutes) is restated with one
  more wall hour, in a benchmarks file loaded after the last build;
- int_chargeback_lines: team platform's September 2024 direct cost grows by 10 USD (the weight its untagged
  credits are spread by), and the ledger's September 2023 lines are gone (a re-delivery without them).
Expected: the work models rebuild 2024-04-05 and 2025-04-08 and delete 2024-04-10, no other day; the splits
rebuild 2024-09 and delete 2023-09, no other period.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from tests.dbt.ledger_nodes import nightly_and_full, rebuilt_periods, run_models

MODELS = {"int_gpu_work_events": "x_event_day", "int_gpu_work_priced": "x_event_day",
          "int_focus_allocation_splits": "x_billing_period"}
RUN = "tr-2025-04-lora-01"
CHANGES = [
    "update intermediate.int_gpu_usage_unbilled set unbilled_gpu_hours = unbilled_gpu_hours + 1, "
    "x_built_at = now() where day = '2024-04-05'",
    "delete from intermediate.int_gpu_usage_unbilled where day = '2024-04-10'",
    f"update raw.training_runs set wall_hours = wall_hours + 1 where run_id = '{RUN}'",
    "insert into audit.file_loads select * replace ('restated-runs' as file_hash, now() as loaded_at) "
    "from audit.file_loads where family = 'benchmarks' limit 1",
    "update intermediate.int_chargeback_lines set amount = amount + 10 where rowid = (select min(rowid) from "
    "intermediate.int_chargeback_lines where billing_period_start = '2024-09-01' and team_id = 'platform' "
    "and line_kind = 'direct_cost' and basis = 'amortised')",
    "delete from marts.ledger_focus where cast(BillingPeriodStart as date) = '2023-09-01'",
]


def _run(ledger: Path, *extra: str) -> None:
    """Run the three models (alone, one dbt command) on `ledger`; asserts each succeeded."""
    run_models(ledger, list(MODELS), *extra)


def _read(ledger: Path) -> dict:
    con = duckdb.connect(str(ledger), read_only=True)
    try:
        out: dict = {}
        for model, day in MODELS.items():
            out[model] = {str(d): (n, stamp) for d, n, stamp in con.execute(
                f"select {day}, count(*), max(x_built_at) from intermediate.{model} group by all").fetchall()}
            out[model + ":rows"] = con.execute(
                f"select * exclude (x_built_at, x_loaded_at) from intermediate.{model} order by all").fetchall()
        out["hours"] = dict(con.execute(
            "select x_event_day::varchar || ' ' || source_kind, sum(gpu_hours)::decimal(18, 6) "
            "from intermediate.int_gpu_work_events group by all").fetchall())
        out["run_hours"] = con.execute(
            f"select component, gpu_hours::decimal(18, 6) from intermediate.int_gpu_work_priced "
            f"where source_ref = '{RUN}' order by all").fetchall()
        return out
    finally:
        con.close()


@pytest.fixture(scope="module")
def steps(sample_run: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    assert sample_run["ok"], sample_run["reason"]
    base = tmp_path_factory.mktemp("gpu_work")
    return nightly_and_full(Path(sample_run["home"]), base, CHANGES, _run, _read)


@pytest.mark.parametrize("model", ["int_gpu_work_events", "int_gpu_work_priced"])
def test_the_work_models_rebuild_the_changed_days_only(steps: dict, model: str) -> None:
    assert len(steps["before"][model]) > 10
    assert _rebuilt_and_gone(steps, model) == (["2024-04-05", "2025-04-08"], ["2024-04-10"])


def _rebuilt_and_gone(steps: dict, model: str) -> tuple[list[str], list[str]]:
    """The model's (days stamped after every stamp before, days gone); every other day keeps its rows and stamp."""
    before, after = steps["before"][model], steps["after"][model]
    return rebuilt_periods(before, after), sorted(set(before) - set(after))


def test_the_splits_rebuild_the_changed_period_only(steps: dict) -> None:
    model = "int_focus_allocation_splits"
    assert sorted(steps["before"][model]) == ["2023-09-01", "2023-11-01", "2024-09-01", "2024-10-01", "2025-04-01"]
    assert _rebuilt_and_gone(steps, model) == (["2024-09-01"], ["2023-09-01"])


def test_the_changed_work_is_there(steps: dict) -> None:
    before, after = steps["before"]["hours"], steps["after"]["hours"]
    # 3 unbilled rows of 2024-04-05, 1 GPU-hour more each: +3
    assert after["2024-04-05 slurm_job"] - before["2024-04-05 slurm_job"] == Decimal("3")
    assert "2024-04-10 slurm_job" not in after
    # the run failed (its work and checkpoints are failure waste): (5.33 h - 3.5 / 60 h of checkpoints) x 1 GPU
    # = 5.271667 and 0.058333; one more wall hour: 6.271667, the checkpoints as they were
    assert steps["before"]["run_hours"] == [("failure_waste", Decimal("0.058333")), ("failure_waste", Decimal("5.271667"))]
    assert steps["after"]["run_hours"] == [("failure_waste", Decimal("0.058333")), ("failure_waste", Decimal("6.271667"))]


@pytest.mark.parametrize("model", list(MODELS))
def test_the_rows_equal_a_full_rebuild(steps: dict, model: str) -> None:
    assert steps["after"][model + ":rows"] == steps["full"][model + ":rows"]
    assert steps["after"][model + ":rows"] != steps["before"][model + ":rows"]
