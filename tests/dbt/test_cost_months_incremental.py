"""int_workload_cost_lines and int_chargeback_lines are incremental by calendar month
(macros/incremental_months.sql): a run rebuilds the months whose input stamps changed, and the rows
equal a full rebuild.

On a copy of the sample ledger (cost lines in 2025-03 and 2025-04; chargeback in billing periods
2023-09, 2023-11, 2024-09, 2024-10 and 2025-04) the inputs are changed and the two models alone are run,
incrementally and with `--full-refresh` on a copy of the same ledger:
1. a late API file for an earlier month: a request of workload `code-agent`, 0.50 USD, on 2025-03-20
   (file `late-file`): the cost lines of March are rebuilt and hold its api_usage line of 0.50; April
   keeps its rows and build stamp; no chargeback period is rebuilt (the API spend reaches the chargeback
   through fct_api_spend_daily, which this test does not rebuild, and March has no chargeback line);
2. a restated bill for an earlier period: a 2023-11 usage line restated from 0.005718340006 to
   100.005718340006 (BilledCost and EffectiveCost, file `restated-bill`): chargeback period 2023-11 is
   rebuilt and its total rises by exactly 100.000000000000 on each basis (2.523589325430 ->
   102.523589325430); every other period keeps its rows and stamp; no cost line month changes;
3. the late request restated away (its file replaced): March is rebuilt without it; April is not.
Each step's rows (less the build stamp) equal a full rebuild of the same inputs.

fct_workload_cost_lines, the published projection of the cost lines, runs with them: it copies again
exactly the months int_workload_cost_lines rebuilt since its column check last passed (recorded after
each step, as the pipeline records it), and the publication (warehouse/publish.py, dbt meta
publish_by_day with grain month) replaces exactly those months in a copy of the sample's serving file.
Both are seen by a marker appended to `detail` of every row of the mart before the step: the rows copied
again lose it. Less the marker, the mart equals the full rebuild's and the publication a whole
publication of the same ledger, row for row.

Each model computes the months it rebuilds once per run: its compiled SQL carries them
(`/* months rebuilt: ... */`, which its pre-hook deletes), the run's dbt log holds one query of changed
stamp digests per model, and of the months carried, those holding rows are exactly the months rebuilt.
"""

from __future__ import annotations

import json
import re
import shutil
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from pipelines.defs.publish.assets import day_scopes
from tests import prefetch
from tests.dbt.ledger_nodes import change, copy_ledger, query, rebuilt_periods, run_models
from warehouse.audit import record_check
from warehouse.publish import publish

MODELS = {"int_workload_cost_lines": "period", "int_chargeback_lines": "billing_period_start"}
MART = "fct_workload_cost_lines"
MART_CHECK = "column_constraints_fct_workload_cost_lines_"
MARKER = " [copied before]"
LATE_REQUEST = "late-request"
RESTATED_LINE = "32b5d93855dd271d80bc98ab73b7dbc96211435be41663a4bc2050c20937da68:10"

LATE_API_FILE = [
    ("insert into intermediate.int_api_requests_allocated select * replace ("
    f"'{LATE_REQUEST}' as request_id, '2025-03-20 12:00:00'::timestamp as started_at, "
    "'2025-03-20 12:00:01'::timestamp as ended_at, 'code-agent' as workload_tag, 0.50::decimal(38, 12) as spend, "
    "'USD' as currency, 'success' as status, 'late-file' as x_file_hash, '2025-03-20'::date as x_request_day) "
    "from intermediate.int_api_requests_allocated where workload_tag = 'code-agent' order by request_id limit 1"),
]
RESTATED_BILL = [
    ("update marts.ledger_focus set BilledCost = BilledCost + 100, EffectiveCost = EffectiveCost + 100, "
    f"x_file_hash = 'restated-bill' where x_charge_key = '{RESTATED_LINE}'"),
]
RESTATED_AWAY = [f"delete from intermediate.int_api_requests_allocated where request_id = '{LATE_REQUEST}'"]


def _run(ledger: Path, *extra: str) -> None:
    """Run the two models and the mart (alone) on `ledger`; asserts all succeeded."""
    run_models(ledger, [*MODELS, MART], *extra)


def _planned(target: Path) -> dict:
    """Per model, the months (first days) its compiled SQL carries as rebuilt in the run whose dbt target
    folder is `target`; and how many queries of changed stamp digests (months_with_changed_digest) the run
    sent."""
    out: dict = {}
    for model in MODELS:
        (compiled,) = (target / "compiled").rglob(f"{model}.sql")
        carried = re.search(r"/\* months rebuilt: (\{.*?\}) \*/", compiled.read_text())
        assert carried is not None, compiled
        plan = json.loads(carried.group(1))
        out[model] = "all" if plan["all"] else sorted({day[:8] + "01" for day in plan["days"]})
    out["digest_queries"] = (target / "dbt.log").read_text().count(
        "stored.digest is distinct from current_digests.digest")
    return out


def _mark(path: Path, table: str) -> None:
    """Append MARKER to `detail` of every row of the mart `table` (a ledger's marts or a serving file)."""
    con = duckdb.connect(str(path))
    try:
        con.execute(f"update {table} set detail = detail || '{MARKER}'")
    finally:
        con.close()


def _copied(path: Path, table: str) -> dict:
    """Months of the mart whose rows were copied again (no marker), and its rows less the marker."""
    return {"months": sorted(r[0] for r in query(path, f"select distinct cast(period as string) from {table} "
                                                       f"where not ends_with(detail, '{MARKER}')")),
            "rows": query(path, f"select * replace (replace(detail, '{MARKER}', '') as detail) from {table} "
                                "order by all")}


def _pass_mart_check(ledger: Path, run: str) -> None:
    """The mart's column check passed after the step (as the pipeline records a dbt test's outcome)."""
    con = duckdb.connect(str(ledger))
    try:
        record_check(con, run, MART_CHECK, "dbt", "error", "pass", "ok")
    finally:
        con.close()


def _state(ledger: Path) -> dict:
    """Per model: per month its rows, build stamp and total; and its rows less the build stamp."""
    out = {}
    for model, month in MODELS.items():
        months = query(ledger, f"select cast({month} as string), count(*), max(x_built_at), sum(amount) "
                               f"from intermediate.{model} group by {month}")
        out[model] = {"months": {m: (n, stamp, total) for m, n, stamp, total in months},
                      "rows": query(ledger, f"select * exclude (x_built_at) from intermediate.{model} order by all")}
    out["late_lines"] = query(ledger, "select component, amount, cast(period as string) "
                                      f"from intermediate.int_workload_cost_lines where source_ref = '{LATE_REQUEST}'")
    out["projection"] = query(ledger, "select * exclude (x_inputs_digest, x_built_at, x_loaded_at, x_history_key) "
                                      "from intermediate.int_workload_cost_lines order by all")
    return out


def build_steps(base: Path, sample_run: dict) -> dict:
    """The three changes below, each built as a night and as a full rebuild (a tests/prefetch.py job, after the
    sample refresh: a lane worker builds it while the session runs other tests)."""
    assert sample_run["ok"], sample_run["reason"]
    nightly = copy_ledger(sample_run["home"], base / "nightly")
    serving = base / "serving.duckdb"
    shutil.copy(sample_run["home"] / "serving.duckdb", serving)
    out = {"first": _state(nightly)}
    for name, sql in (("late_api_file", LATE_API_FILE), ("restated_bill", RESTATED_BILL),
                      ("restated_away", RESTATED_AWAY)):
        change(nightly, sql)
        full = copy_ledger(nightly.parent, base / f"full-{name}")
        _mark(nightly, f"marts.{MART}")
        _mark(serving, MART)
        _run(nightly)
        planned = _planned(nightly.parent / "target")
        _run(full, "--full-refresh")
        _pass_mart_check(nightly, name)
        publish(nightly, serving, name, datetime.now(UTC), carry_checks=True, rebuilt={MART}, by_day=day_scopes())
        whole = base / f"whole-{name}.duckdb"
        publish(nightly, whole, name, datetime.now(UTC))
        out[name] = {"nightly": _state(nightly), "full": _state(full), "mart": _copied(nightly, f"marts.{MART}"),
                     "full_mart": _copied(full, f"marts.{MART}"), "published": _copied(serving, MART),
                     "whole": _copied(whole, MART), "planned": planned}
    return out


@pytest.fixture(scope="module")
def cost_month_steps(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("cost_months", tmp_path_factory)


def _check_full(step: dict, months: list[str]) -> None:
    """The step's rows equal the full rebuild's; the mart and the publication copied exactly `months`
    again and equal the full rebuild's mart and a whole publication."""
    for model in MODELS:
        assert step["nightly"][model]["rows"] == step["full"][model]["rows"], model
    assert step["mart"]["months"] == months
    assert step["published"]["months"] == months
    assert step["full_mart"]["months"] == ["2025-03-01", "2025-04-01"]  # a full refresh writes every month
    assert step["mart"]["rows"] == step["full_mart"]["rows"] == step["nightly"]["projection"]
    assert step["published"]["rows"] == step["whole"]["rows"] == step["mart"]["rows"]


def test_the_sample_months(cost_month_steps: dict) -> None:
    first = cost_month_steps["first"]
    assert sorted(first["int_workload_cost_lines"]["months"]) == ["2025-03-01", "2025-04-01"]
    assert sorted(first["int_chargeback_lines"]["months"]) == [
        "2023-09-01", "2023-11-01", "2024-09-01", "2024-10-01", "2025-04-01"]


def test_a_late_api_file_rebuilds_exactly_its_month(cost_month_steps: dict) -> None:
    before, step = cost_month_steps["first"], cost_month_steps["late_api_file"]
    after = step["nightly"]
    lines = after["int_workload_cost_lines"]
    assert rebuilt_periods(before["int_workload_cost_lines"]["months"], lines["months"]) == ["2025-03-01"]
    # March gains the request's line: 0.50 USD of api_usage (one more line, its total up by 0.50)
    n = before["int_workload_cost_lines"]["months"]["2025-03-01"][0]
    assert lines["months"]["2025-03-01"][0] >= n + 1
    assert after["late_lines"] == [("api_usage", Decimal("0.500000000000"), "2025-03-01")]
    assert rebuilt_periods(before["int_chargeback_lines"]["months"], after["int_chargeback_lines"]["months"]) == []
    _check_full(step, ["2025-03-01"])


def test_a_restated_bill_rebuilds_exactly_its_billing_period(cost_month_steps: dict) -> None:
    before, step = cost_month_steps["late_api_file"]["nightly"], cost_month_steps["restated_bill"]
    after = step["nightly"]
    charged = after["int_chargeback_lines"]["months"]
    assert rebuilt_periods(before["int_chargeback_lines"]["months"], charged) == ["2023-11-01"]
    # both bases of 2023-11: 2 x 2.523589325430 before; the line's +100 on each basis
    old_total = before["int_chargeback_lines"]["months"]["2023-11-01"][2]
    assert old_total == Decimal("5.047178650860")
    assert charged["2023-11-01"][2] == old_total + Decimal(200)
    lines_after = after["int_workload_cost_lines"]["months"]
    assert rebuilt_periods(before["int_workload_cost_lines"]["months"], lines_after) == []
    _check_full(step, [])


def test_a_request_restated_away_rebuilds_its_month_without_it(cost_month_steps: dict) -> None:
    before, step = cost_month_steps["restated_bill"]["nightly"], cost_month_steps["restated_away"]
    after = step["nightly"]
    lines = after["int_workload_cost_lines"]
    assert rebuilt_periods(before["int_workload_cost_lines"]["months"], lines["months"]) == ["2025-03-01"]
    first = cost_month_steps["first"]["int_workload_cost_lines"]["months"]
    assert lines["months"]["2025-03-01"][0] == first["2025-03-01"][0]
    assert after["late_lines"] == []
    _check_full(step, ["2025-03-01"])


@pytest.mark.parametrize("name,previous", [("late_api_file", "first"), ("restated_bill", "late_api_file"),
                                           ("restated_away", "restated_bill")])
def test_each_model_computes_its_months_once_and_rebuilds_exactly_them(cost_month_steps: dict, name: str,
                                                                       previous: str) -> None:
    step = cost_month_steps[name]
    before = cost_month_steps[previous] if previous == "first" else cost_month_steps[previous]["nightly"]
    # one query of changed digests per model: the pre-hook reads the months from the compiled SQL
    assert step["planned"]["digest_queries"] == len(MODELS)
    for model in MODELS:
        after = step["nightly"][model]["months"]
        rebuilt = rebuilt_periods(before[model]["months"], after)
        assert step["planned"][model] != "all"
        assert [m for m in step["planned"][model] if m in after] == rebuilt, model
