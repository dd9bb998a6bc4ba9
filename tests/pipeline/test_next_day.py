"""The nightly case: a fleet's days 1..N-1 refreshed, then day N's files arrive (telemetry, Slurm
accounting, LiteLLM spend logs) and the next refresh rebuilds only what they affect. Its publication
must equal a full refresh of days 1..N into a fresh home: every published table, row for row, money
to the cent (tests/pipeline/test_incremental.py `_same`: DECIMALs to 1e-7, doubles to 1e-9 relative).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from pipelines.cli import execute_refresh
from tests import prefetch
from tests.conftest import published_tables
from tests.pipeline.test_incremental import assert_same_tables
from tools.generate import generate

pytestmark = pytest.mark.e2e

LAST = "2025-04-03"
DAILY = re.compile(rf"^(dcgm|sacct|litellm_spend_logs)_{LAST}\.(csv|txt)$")


def _dbt_nodes(home: Path) -> set[str]:
    return {r["unique_id"] for r in json.loads((home / "dbt-target" / "run_results.json").read_text())["results"]}


def build_next_day(base: Path) -> dict:
    """Days 1-2 then day 3 into one home; days 1-3 at once into another (a tests/prefetch.py job)."""
    fleet, inputs = base / "fleet", base / "inputs"
    generate(fleet, gpus=8, days=3, teams=2, seed=2)
    shutil.copytree(fleet, inputs)  # copy2: the same modification times as the fleet's files
    held = sorted(p.relative_to(fleet) for p in fleet.rglob("*") if DAILY.match(p.name))
    for rel in held:
        (inputs / rel).unlink()
    nightly, full = base / "nightly", base / "full"
    ok, _, reason = execute_refresh(nightly, inputs, docs=False)
    assert ok, reason
    first_nodes = _dbt_nodes(nightly)
    for rel in held:
        shutil.copy2(fleet / rel, inputs / rel)
    ok, _, reason = execute_refresh(nightly, inputs, docs=False)
    assert ok, reason
    ok, _, reason = execute_refresh(full, fleet, docs=False)
    assert ok, reason
    return {"held": [str(r) for r in held], "first_nodes": first_nodes, "next_nodes": _dbt_nodes(nightly),
            "next_day": published_tables(nightly / "serving.duckdb"), "full": published_tables(full / "serving.duckdb")}


@pytest.fixture(scope="module")
def next_day(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("next_day", tmp_path_factory)


def test_the_day_is_three_files_and_only_what_they_affect_is_rebuilt(next_day: dict) -> None:
    assert next_day["held"] == [f"api_spend/litellm_spend_logs_{LAST}.csv", f"usage/dcgm_{LAST}.csv",
                                f"usage/sacct_{LAST}.txt"]
    first, second = next_day["first_nodes"], next_day["next_nodes"]
    assert second < first
    assert {"model.gpu_ledger.int_gpu_usage_hourly", "model.gpu_ledger.fct_chargeback_monthly"} <= second
    # registry and billing models read file_loads, but only their own families' rows
    assert {"model.gpu_ledger.stg_registry__teams", "model.gpu_ledger.int_billing_charges_current"} <= first - second
    # the day writes telemetry samples, Slurm jobs and proxy requests: readers of the families' other
    # raw tables (node inventory, provider cost reports, the price catalog) are not rebuilt
    assert {"model.gpu_ledger.stg_usage__gpu_inventory", "model.gpu_ledger.stg_api_spend__cost_buckets",
            "model.gpu_ledger.fct_api_prices"} <= first - second


def test_the_next_day_publishes_what_a_full_refresh_of_every_day_does(next_day: dict) -> None:
    incremental, full = next_day["next_day"], next_day["full"]
    # the day is in the published figures (a refresh that ignored it would also differ from the full one)
    assert any(str(row[0]).startswith(LAST) for row in full["fct_gpu_utilisation_daily"])
    assert_same_tables(incremental, full)
