"""The nightly case: a fleet's days 1..N-1 refreshed, then day N's files arrive (telemetry, Slurm
accounting, LiteLLM spend logs) and the next refresh rebuilds only what they affect. Its publication
must equal a full refresh of days 1..N into a fresh home: every published table, row for row, money
to the cent (tests/pipeline/test_incremental.py `_same`: DECIMALs to 1e-7, doubles to 1e-9 relative).

Read from the first two refreshes of the usage chain's home (tests/pipeline/test_incremental_usage_chain.py,
a 3-day generated fleet): the second brings day 3's files (and a late accounting file of days 2-3, which
touches the same usage models), and is compared with a full refresh of the same inputs into a fresh home.
"""

from __future__ import annotations

import pytest

from tests import prefetch
from tests.pipeline.test_incremental import assert_same_tables

pytestmark = pytest.mark.e2e

LAST = "2025-04-03"


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("usage_chain", tmp_path_factory)


def test_the_day_is_three_files_and_only_what_they_affect_is_rebuilt(chain: dict) -> None:
    assert chain["held"] == [f"api_spend/litellm_spend_logs_{LAST}.csv", f"usage/dcgm_{LAST}.csv",
                             f"usage/sacct_{LAST}.txt"]
    first, second = chain["first"]["nodes"], chain["next_day"]["nodes"]
    assert second < first
    assert {"model.gpu_ledger.int_gpu_usage_hourly", "model.gpu_ledger.fct_chargeback_monthly"} <= second
    # registry and billing models read file_loads, but only their own families' rows
    assert {"model.gpu_ledger.stg_registry__teams", "model.gpu_ledger.int_billing_charges_current"} <= first - second
    # the day writes telemetry samples, Slurm jobs and proxy requests: readers of the families' other
    # raw tables (node inventory, provider cost reports, the price catalog) are not rebuilt
    assert {"model.gpu_ledger.stg_usage__gpu_inventory", "model.gpu_ledger.stg_api_spend__cost_buckets",
            "model.gpu_ledger.fct_api_prices"} <= first - second


def test_the_next_day_publishes_what_a_full_refresh_of_every_day_does(chain: dict) -> None:
    incremental, full = chain["next_day"]["published"], chain["next_day"]["full_published"]
    # the day is in the published figures (a refresh that ignored it would also differ from the full one)
    assert any(str(row[0]).startswith(LAST) for row in full["fct_gpu_utilisation_daily"])
    assert_same_tables(incremental, full)
