"""The golden ledger: the real pipeline on tests/golden/inputs/, every row to the cent.

Every expected figure below is derived by hand in tests/golden/EXPECTED.md (section numbers in the
comments). The tests compare whole tables: a row too many or too few fails as surely as a wrong cent.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from tests import golden_cases, prefetch
from tests.golden_cases import cents, rows

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden" / "inputs"
APRIL = "2025-04-01"


def build_golden(root: Path) -> dict:
    """One refresh of tests/golden/inputs into a fresh home (a tests/prefetch.py job)."""
    return golden_cases.refresh(root, GOLDEN)


@pytest.fixture(scope="module")
def golden_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("golden", tmp_path_factory)


@pytest.fixture(scope="module")
def con(golden_run: dict):
    with golden_cases.published(golden_run) as con:
        yield con




def test_unit_costs(con):
    # EXPECTED.md § 4 and § 5
    got = {r["workload_id"]: r for r in rows(con, "select * from fct_workload_unit_cost")}
    assert set(got) == {"chat", "pretrain"}
    expected = {
        "chat": dict(gpu_compute="1142.274", api_usage="0.50", storage="20.00", network="3.00", checkpointing="0",
                     serving_stack="0", observability="65.2728", platform_labor="67.447372134266",
                     idle_capacity="163.182", retry_waste="0.10", failure_waste="0", queue_overhead="0",
                     moderation_or_quality_filtering="0", operator_review="0", all_in_cost="1461.776172134266",
                     effective_unit_cost="1.082797164544", naive_unit_cost="0.870704",
                     produced_outputs=1500, accepted_outputs=1350),
        "pretrain": dict(gpu_compute="735.00", api_usage="0", storage="80.00", network="0", checkpointing="80.00",
                         serving_stack="0", observability="61.05", platform_labor="65.885961199067",
                         idle_capacity="0", retry_waste="0", failure_waste="406.00", queue_overhead="0",
                         moderation_or_quality_filtering="0", operator_review="0", all_in_cost="1427.935961199067",
                         effective_unit_cost="1427.935961199067", naive_unit_cost="610.50",
                         produced_outputs=2, accepted_outputs=1),
    }
    for workload, want in expected.items():
        row = got[workload]
        assert (str(row["period"]), row["currency"], row["basis"]) == (APRIL, "USD", "production")
        # chat is real-time inference: no production latency evidence, so the SLO is not applied and it says so
        assert row["unit_cost_note"] == (
            None if workload == "pretrain"
            else "accepted = quality-filter accepted; latency SLO not applied (no production serving latency evidence)")
        for column, value in want.items():
            if isinstance(value, int):
                assert row[column] == value, (workload, column)
            else:
                assert cents(row[column]) == cents(value), (workload, column, row[column], value)
    # the unit costs themselves beyond the cent (they are small numbers)
    assert got["chat"]["effective_unit_cost"] == Decimal("1.082797164544")
    assert got["chat"]["naive_unit_cost"] == Decimal("0.870704")


def test_cost_lines_by_component_and_cause(con):
    # EXPECTED.md § 2-4
    got = sorted(
        (r["workload_id"], r["component"], r["cause"], r["source_kind"], cents(r["amount"]))
        for r in rows(con, "select * from fct_workload_cost_lines")
    )
    expected = sorted([
        ("chat", "gpu_compute", None, "bill_line", cents("1142.274")),
        ("chat", "idle_capacity", "unallocated", "bill_line", cents("163.182")),
        ("chat", "network", None, "bill_line", cents("3.00")),
        ("chat", "storage", None, "registry_assumption", cents("20.00")),
        ("chat", "observability", None, "policy", cents("65.2728")),
        ("chat", "api_usage", None, "api_request", cents("0.50")),
        ("chat", "retry_waste", "failed_request", "api_request", cents("0.10")),
        ("chat", "platform_labor", None, "policy", cents("67.447372134266")),
        ("pretrain", "gpu_compute", None, "training_run", cents("720.00")),
        ("pretrain", "checkpointing", None, "training_run", cents("80.00")),
        ("pretrain", "failure_waste", "failed_run", "training_run", cents("400.00")),
        ("pretrain", "failure_waste", "failed_job", "slurm_job", cents("6.00")),
        ("pretrain", "gpu_compute", None, "slurm_job", cents("15.00")),
        ("pretrain", "storage", None, "registry_assumption", cents("80.00")),
        ("pretrain", "observability", None, "policy", cents("61.05")),
        ("pretrain", "platform_labor", None, "policy", cents("65.885961199067")),
    ], key=lambda t: tuple("" if v is None else str(v) for v in t))
    key = lambda t: tuple("" if v is None else str(v) for v in t)
    assert sorted(got, key=key) == sorted(expected, key=key)
    # estimates say so, with the days they are prorated to
    details = {r["workload_id"]: r["detail"] for r in rows(
        con, "select workload_id, detail from fct_workload_cost_lines where source_kind = 'registry_assumption'")}
    assert details["chat"].startswith("estimate:") and "2/30 active days" in details["chat"]
    assert details["pretrain"].startswith("estimate:") and "4/30 active days" in details["pretrain"]
    # labour is prorated to the 4 days of April any workload was active (EXPECTED.md § 4)
    labour = {r["workload_id"]: r for r in rows(
        con, "select workload_id, amount, detail from fct_workload_cost_lines where component = 'platform_labor'")}
    assert all("x 4/30 days with workload activity" in r["detail"] for r in labour.values())
    assert labour["chat"]["amount"] == Decimal("67.447372134266")
    assert labour["pretrain"]["amount"] == Decimal("65.885961199067")


def test_gpu_utilisation_daily(con):
    # EXPECTED.md § 1
    cols = ["billed_gpu_hours", "allocated_gpu_hours", "used_gpu_hours", "measured_gpu_hours", "idle_gpu_hours",
            "unallocated_gpu_hours", "underused_gpu_hours", "unmeasured_gpu_hours", "unobserved_gpu_hours",
            "failed_job_gpu_hours", "cancelled_job_gpu_hours", "utilisation_pct"]
    got = {(str(r["day"]), r["team_id"], r["workload_id"], r["gpu_model"]): [cents(r[c]) for c in cols]
           for r in rows(con, "select * from fct_gpu_utilisation_daily")}
    d = lambda *v: [None if x is None else cents(x) for x in v]
    expected = {
        ("2025-04-14", "research", "pretrain", "V100-32GB"): d(0, 4, 0, 0, 0, 0, 0, 4, 0, 4, 0, None),
        ("2025-04-14", "support", "chat", "A100-40GB"): d(192, 192, 96, 192, 96, 0, 96, 0, 0, 0, 0, 50),
        ("2025-04-15", "research", "pretrain", "V100-32GB"): d(0, 10, 0, 0, 0, 0, 0, 10, 0, 0, 0, None),
        ("2025-04-15", "support", "chat", "A100-40GB"): d(192, 48, 24, 48, 72, 48, 24, 0, 96, 0, 0, 50),
    }
    assert got == expected
    # one fleet: never more than 8 GPUs x 24 h billed a day for chat
    assert max(v[0] for k, v in got.items() if k[2] == "chat") <= 8 * 24


def test_chargeback_monthly(con):
    # EXPECTED.md § 6
    got = {r["team_id"]: r for r in rows(con, "select * from fct_chargeback_monthly")}
    assert set(got) == {"(idle)", "support"}
    expected = {
        "(idle)": dict(direct_cost="0", shared_cost="0", idle_cost="163.182", api_cost="0", credits="0", tax="0",
                       total_cost="163.182", billed_cost="163.182", amortised_cost="163.182",
                       unused_commitment="0", budget_remaining=None, forecast_month_end="163.182"),
        "support": dict(direct_cost="1145.274", shared_cost="0", idle_cost="0", api_cost="0.60", credits="0",
                        tax="0", total_cost="1145.874", billed_cost="1145.274", amortised_cost="1145.274",
                        unused_commitment="0", budget_remaining="3854.126", forecast_month_end="1145.874"),
    }
    for team, want in expected.items():
        row = got[team]
        assert (str(row["billing_period_start"]), row["currency"], row["basis"]) == (APRIL, "USD", "amortised")
        for column, value in want.items():
            assert cents(row[column]) == cents(value), (team, column, row[column], value)
    total = sum(r["total_cost"] for r in got.values())
    assert cents(total) == cents("1309.056")  # invoice 1,308.456 + API 0.60
