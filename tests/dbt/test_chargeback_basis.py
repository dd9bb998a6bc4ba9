"""Chargeback on two bases, by hand.

One refresh of tests/fixtures/billing/commitments_2025-04/ (registry: teams inference, training,
analytics; policies chargeback_basis amortised and unused_commitment_policy unallocated, the
defaults; one workload chat-serve of team inference). The FOCUS 1.2 file, billing period 2025-04:

USD account 111122223333                          BilledCost  EffectiveCost  team (tag)
 1 p5 usage covered by savings plan sp-0001 (Used)       0.00       8000.00  inference
 2 sp-0001 monthly fee (Purchase, Recurring)         10000.00          0.00  (none)
 3 sp-0001 unused commitment (Usage, Unused)             0.00       2000.00  (none)
 4 m7i on demand                                     1900.00       1900.00  training
 5 m7i covered by an all-upfront RI (billed earlier)     0.00        500.00  training
 6 CloudTrail/Config (Management and Governance)      500.00        500.00  (none) -> shared pool
 7 SLA credit (Credit)                                -300.00       -300.00  training
 8 sales tax (Tax)                                    1200.00       1200.00  (none) -> by chargeback
 9 correction of 2025-03 usage (ChargeClass Correction,
   ChargePeriodStart 2025-03-10, on the April invoice) -400.00      -400.00  training
   invoice                                           12900.00      13400.00
EUR account eu-billing-77
10 D96as v5                                            600.00        600.00  inference
11 D96as v5                                           1000.00       1000.00  analytics
12 Azure Policy and Monitor (Management and Governance) 160.00       160.00  (none) -> shared pool
   invoice                                            1760.00       1760.00

The untagged tax (line 8) follows the cost it relates to (policy credits_tax_split, default
proportional): it is spread over the teams in proportion to their chargeback of the basis before
credits and tax. Amortised: inference 8000 + 400 = 8400, training 2000 + 100 = 2100, (unallocated)
unused 2000 -> 12500; tax 1200 x 8400 / 12500 = 806.40, x 2100 / 12500 = 201.60, x 2000 / 12500 = 192.00.
Billed: inference 0 + 0 = 0 (no share), training 1500 + 500 = 2000, (unallocated) fee 10000 -> 12000;
tax 1200 x 2000 / 12000 = 200, x 10000 / 12000 = 1000.
"""

from __future__ import annotations

import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from tests import prefetch

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "billing" / "commitments_2025-04"
CENT = Decimal("0.01")
APRIL = "2025-04-01"


def build_home(root: Path, registry_edit: dict[str, str] | None = None) -> dict:
    """A fresh home after one refresh of the fixture (registry_edit: text replacements in teams.yaml)."""
    from pipelines.cli import execute_refresh

    inputs = root / "inputs"
    shutil.copytree(FIXTURE, inputs)
    if registry_edit:
        teams = inputs / "registry" / "teams.yaml"
        text = teams.read_text()
        for old, new in registry_edit.items():
            assert old in text, old
            text = text.replace(old, new)
        teams.write_text(text)
    home = root / "home"
    ok, _run_id, reason = execute_refresh(home, inputs, docs=False)
    return {"ok": ok, "reason": reason, "home": home}


@pytest.fixture(scope="module")
def chargeback_basis_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """build_home(root), built ahead in tests/prefetch.py."""
    return prefetch.result("chargeback_basis", tmp_path_factory)


@pytest.fixture(scope="module")
def con(chargeback_basis_run: dict):
    run = chargeback_basis_run
    assert run["ok"], run["reason"]
    con = duckdb.connect(str(run["home"] / "serving.duckdb"), read_only=True)
    yield con
    con.close()


def cents(value) -> Decimal:
    return Decimal(value).quantize(CENT)


def chargeback(con, team: str, currency: str) -> dict:
    cur = con.execute("select * from fct_chargeback_monthly where team_id = ? and currency = ? "
                      "and billing_period_start = ?", [team, currency, APRIL])
    names = [d[0] for d in cur.description]
    rows = cur.fetchall()
    assert len(rows) == 1, (team, currency, rows)
    return {k: (cents(v) if isinstance(v, Decimal) else v) for k, v in zip(names, rows[0])}


def test_inference_usd_by_hand(con):
    row = chargeback(con, "inference", "USD")
    # billed: the covered usage bills 0 (line 1); inference has no other USD line, and the shared
    # pool is spread by billed direct cost (inference 0 : training 1500) -> 0
    assert row["billed_cost"] == Decimal("0.00")
    # amortised: 8000 (covered usage, line 1) + shared 500 x 8000 / (8000 + 2000) = 400 -> 8400
    # (training's amortised direct: 1900 + 500 - 400 = 2000); + tax 1200 x 8400 / 12500 = 806.40 -> 9206.40
    assert row["amortised_cost"] == Decimal("9206.40")
    assert (row["direct_cost"], row["shared_cost"], row["tax"]) == (
        Decimal("8000.00"), Decimal("400.00"), Decimal("806.40"))
    assert row["unused_commitment"] == 0  # policy unallocated: never inside a team
    assert row["basis"] == "amortised"
    assert row["total_cost"] == Decimal("9206.40")  # amortised + no API spend
    assert row["budget_remaining"] == Decimal("-206.40")  # budget 9000 - 9206.40


def test_training_usd_by_hand(con):
    row = chargeback(con, "training", "USD")
    # billed: direct 1900 (line 4) + 0 (line 5, RI billed in an earlier period) - 400 (line 9, the
    # March correction lands in the April billing period) = 1500; shared 500 x 1500 / (0 + 1500)
    # = 500; its own credit -300 (line 7, tagged: stays); tax 1200 x 2000 / 12000 = 200
    # -> 1500 + 500 - 300 + 200 = 1900
    assert row["billed_cost"] == Decimal("1900.00")
    # amortised: direct 1900 + 500 - 400 = 2000; shared 500 x 2000 / 10000 = 100; credit -300;
    # tax 1200 x 2100 / 12500 = 201.60 -> 2001.60
    assert row["amortised_cost"] == Decimal("2001.60")
    assert (row["direct_cost"], row["shared_cost"], row["credits"], row["tax"]) == (
        Decimal("2000.00"), Decimal("100.00"), Decimal("-300.00"), Decimal("201.60"))
    assert row["total_cost"] == Decimal("2001.60")


def test_unallocated_usd_by_hand(con):
    row = chargeback(con, "(unallocated)", "USD")
    # billed: the plan fee 10000 (line 2) + unused 0 (line 3) + tax 1200 x 10000 / 12000 = 1000 -> 11000
    assert row["billed_cost"] == Decimal("11000.00")
    # amortised: fee 0 + unused commitment 2000 (its own column) + tax 1200 x 2000 / 12500 = 192 -> 2192
    assert row["amortised_cost"] == Decimal("2192.00")
    assert (row["direct_cost"], row["unused_commitment"], row["tax"]) == (
        Decimal("0.00"), Decimal("2000.00"), Decimal("192.00"))
    assert row["total_cost"] == Decimal("2192.00")


def test_eur_account_by_hand(con):
    # Billed = amortised (no commitments). Shared 160 spread 600 : 1000 -> 60 and 100.
    inference = chargeback(con, "inference", "EUR")
    analytics = chargeback(con, "analytics", "EUR")
    assert (inference["billed_cost"], inference["amortised_cost"]) == (Decimal("660.00"), Decimal("660.00"))
    assert (analytics["billed_cost"], analytics["amortised_cost"]) == (Decimal("1100.00"), Decimal("1100.00"))
    assert inference["budget_monthly"] is None  # inference's budget is in USD
    assert analytics["budget_remaining"] == Decimal("400.00")  # 1500 - 1100


def test_both_reconciliations_hold(con):
    totals = {c: (cents(b), cents(a), cents(t)) for c, b, a, t in con.execute(
        "select currency, sum(billed_cost), sum(amortised_cost), sum(total_cost) from fct_chargeback_monthly "
        "group by all").fetchall()}
    # USD billed: 0 + 10000 + 0 + 1900 + 0 + 500 - 300 + 1200 - 400 = 12900 (= 0 + 1900 + 11000)
    # USD amortised: 8000 + 0 + 2000 + 1900 + 500 + 500 - 300 + 1200 - 400 = 13400 (= 9206.40 + 2001.60 + 2192)
    assert totals["USD"] == (Decimal("12900.00"), Decimal("13400.00"), Decimal("13400.00"))
    # EUR: 600 + 1000 + 160 = 1760 on both bases
    assert totals["EUR"] == (Decimal("1760.00"), Decimal("1760.00"), Decimal("1760.00"))
    ledger = {c: (cents(b), cents(e)) for c, b, e in con.execute(
        "select BillingCurrency, sum(BilledCost), sum(EffectiveCost) from ledger_focus group by all").fetchall()}
    assert ledger == {"USD": (Decimal("12900.00"), Decimal("13400.00")),
                      "EUR": (Decimal("1760.00"), Decimal("1760.00"))}


def test_bridge_on_the_amortised_basis(con):
    steps = con.execute("select step, amount, running_total from fct_cost_bridge where currency = 'USD' "
                        "order by step_order").fetchall()
    # Invoice 12900 -> + amortisation 500 (13400 - 12900: the RI usage billed in an earlier period;
    # the plan fee 10000 = covered 8000 + unused 2000 nets out) -> + API 0 -> Chargeback 13400 ->
    # + estimates 3.33 (chat-serve storage_monthly 100 prorated to its 1 active day of 30: estimates fill
    # gaps only) -> + platform labour 1000 x 1/30 = 33.33 (the month's one day with workload activity)
    # -> showback 13400 + 3.333333333333 + 33.333333333333 = 13436.67
    assert [(s, cents(a), cents(r)) for s, a, r in steps] == [
        ("Invoice", Decimal("12900.00"), Decimal("12900.00")),
        ("Amortisation adjustments", Decimal("500.00"), Decimal("13400.00")),
        ("API spend", Decimal("0.00"), Decimal("13400.00")),
        ("Chargeback", Decimal("13400.00"), Decimal("13400.00")),
        ("Run-priced work not on a bill", Decimal("0.00"), Decimal("13400.00")),
        ("Owned hardware", Decimal("0.00"), Decimal("13400.00")),
        ("Estimates", Decimal("3.33"), Decimal("13403.33")),
        ("Platform labour", Decimal("33.33"), Decimal("13436.67")),
        ("Idle not on a bill", Decimal("0.00"), Decimal("13436.67")),
        ("All-in showback", Decimal("13436.67"), Decimal("13436.67")),
    ]


def test_team_budget_against_both_figures(con):
    row = con.execute(
        "select budget_monthly, chargeback_total, showback_total, budget_remaining_chargeback, "
        "budget_remaining_showback from fct_team_budget_monthly where team_id = 'inference' and currency = 'USD'"
    ).fetchone()
    # chargeback 9206.40; showback 9206.40 + 3.333333333333 (storage estimate 100 x 1/30 active days)
    # + 33.333333333333 (labour 1000 x 1/30 days with workload activity) = 9243.07; budget 9000
    assert [cents(v) for v in row] == [Decimal("9000.00"), Decimal("9206.40"), Decimal("9243.07"),
                                       Decimal("-206.40"), Decimal("-243.07")]
