"""The golden decision: the real pipeline on tests/golden_decision/inputs/, demand, sizing, savings and
the back-test to the cent. Every expected figure is derived by hand in tests/golden_decision/EXPECTED.md
(section numbers in the comments). The registry keeps platform labour and observability at 0 so that
changes to how they are spread do not move these figures.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from tests import golden_cases, prefetch
from tests.golden_cases import cents, rows

REPO = Path(__file__).resolve().parents[2]
INPUTS = REPO / "tests" / "golden_decision" / "inputs"
MONEY = {"gpu_cost", "monthly_cost", "monthly_savings", "storage_network", "platform_labor", "failure_loss",
         "price_per_instance_hour", "today_monthly_cost"}


def build_golden_decision(root: Path) -> dict:
    """One refresh of tests/golden_decision/inputs into a fresh home (a tests/prefetch.py job)."""
    return golden_cases.refresh(root, INPUTS)


@pytest.fixture(scope="module")
def golden_decision_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("golden_decision", tmp_path_factory)


@pytest.fixture(scope="module")
def con(golden_decision_run: dict):
    with golden_cases.published(golden_decision_run) as con:
        yield con




def test_demand_and_today_on_one_month(con):
    # EXPECTED.md § 1
    current = rows(con, "select * from fct_candidate_comparison where route_kind = 'current'")
    assert len(current) == 1
    r = current[0]
    assert (r["days_observed"], r["days_in_month"], r["accepted_outputs"]) == (2, 30, 21375)
    assert cents(r["monthly_cost"]) == cents(r["today_monthly_cost"]) == Decimal("19881.84")
    assert r["today_unit_cost"] == pytest.approx(Decimal("19881.84") / 21375, abs=Decimal("1e-9"))
    assert r["quality_acceptance"] == 0.95


def test_memory_fit_at_the_request_shape(con):
    # EXPECTED.md § 2
    fit = {(r["gpu_model"], r["concurrency"]): r for r in rows(
        con, "select * from fct_memory_fit where gpu_count = 8 and gpu_model in ('A100-40GB', 'H100-SXM-80GB')")}
    a100 = fit[("A100-40GB", 1)]
    assert (a100["kv_tokens_per_session"], a100["weights_gb"], a100["required_gb"]) == (1000, 141.2, 189.53)
    assert fit[("A100-40GB", 8)]["margin_pct"] == 40.1
    assert fit[("H100-SXM-80GB", 8)]["margin_pct"] == 65.0


def test_candidates_to_the_cent(con):
    # EXPECTED.md § 3 and § 4: the whole table, a row too many or too few fails
    got = {r["route_kind"] + "|" + r["candidate"]: r for r in rows(con, "select * from fct_candidate_comparison")}
    expected = {
        "current|today (production 2025-04-01, month run-rate)":
            dict(status="today", instances=None, gpu_cost=None, monthly_cost="19881.84", monthly_savings="0.00",
                 rank=None, evidence="measured"),
        "gpu|aws p4d.24xlarge (8x A100-40GB) x1":
            dict(status="eligible", instances=1, gpu_cost="14400.00", monthly_cost="14700.00",
                 monthly_savings="5181.84", rank=1, evidence="measured", savings_pct=26.1, memory_margin_pct=40.1,
                 ttft_ms_p95=448.2, tpot_ms_p95=55.0, sessions_per_replica=8, storage_network="300.00",
                 platform_labor="0.00", failure_loss="0.00"),
        "gpu|aws p5.48xlarge (8x H100-SXM-80GB) x1":
            dict(status="costs more", instances=1, gpu_cost="57600.00", monthly_cost="57900.00",
                 monthly_savings="-38018.16", rank=None, evidence="projected", savings_pct=-191.2,
                 memory_margin_pct=65.0, ttft_ms_p95=208.1, tpot_ms_p95=25.5, eligible=False, passes_gates=True),
        "today_shape|today shape: azure standard_nd96asr_v4 (8x A100-40GB) x1":
            dict(status="back-test", instances=1, gpu_cost="19581.84", monthly_cost="19881.84",
                 monthly_savings="0.00", rank=None, evidence="measured", memory_margin_pct=40.1,
                 price_per_instance_hour="27.20", backtest_gap_pct=0.0),
    }
    assert set(got) == set(expected)
    for key, want in expected.items():
        row = got[key]
        for col, value in want.items():
            have = row[col]
            if value is None:
                assert have is None, (key, col, have)
            elif col in MONEY:
                assert cents(have) == Decimal(value), (key, col, have)
            else:
                assert have == value, (key, col, have)
    assert got["gpu|aws p4d.24xlarge (8x A100-40GB) x1"]["effective_unit_cost"] == \
        pytest.approx(Decimal(14700) / 21375, abs=Decimal("1e-9"))


def test_back_test_within_15_percent(con):
    # EXPECTED.md § 5
    shape = rows(con, "select * from fct_candidate_comparison where route_kind = 'today_shape'")[0]
    assert shape["price_per_instance_hour"] == Decimal("27.197")
    assert abs(shape["backtest_gap_pct"]) <= 15
    assert shape["memory_gate"] == shape["latency_gate"] == shape["quality_gate"] == "pass"
