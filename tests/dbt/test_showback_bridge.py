"""All-in showback and the Invoice -> Chargeback -> All-in showback bridge.

The fixture of test_chargeback_basis.py (see its docstring for the twelve lines) with the other two
policies: chargeback_basis billed and unused_commitment_policy spread. Figures by hand:

- billed basis (total_cost): inference 0 (covered usage bills 0; shared 500 spread by billed direct
  cost 0 : 1500 -> 0); training 1500 + 500 - 300 = 1700 before tax; (unallocated) fee 10000; the unused
  commitment bills 0, spread -> 0 each. The untagged tax 1200 follows each team's chargeback before
  credits and tax (credits_tax_split proportional, the default): training 1500 + 500 = 2000,
  (unallocated) 10000, inference 0 (no share) -> 1200 x 2000 / 12000 = 200 and 1200 x 10000 / 12000
  = 1000. training 1900, (unallocated) 11000. Σ 12900 = the invoice.
- amortised basis: inference 8000 + shared 500 x 0.8 = 400 + unused 2000 x 0.8 = 1600 -> 10000;
  training 2000 + 100 + 400 = 2500 before its credit -300; (unallocated) fee 0 (no share). Tax 1200 x
  10000 / 12500 = 960 and 1200 x 2500 / 12500 = 240: inference 10960, training 2500 - 300 + 240 = 2440,
  (unallocated) 0. Σ 13400 = Σ EffectiveCost.
- showback (always amortised, plus cost lines on no bill): inference 10960 + storage estimate 3.33
  (storage_monthly 100 prorated to chat-serve's 1 active day of 30: estimates fill gaps only)
  + platform labour 1000 x 1/30 = 33.33 (1 day of April with workload activity) = 10996.67
  (10960 + 3.333333333333 + 33.333333333333); training 2440; (unallocated) 0. Σ 13436.67.
- bridge (billed basis: amortisation comes after Chargeback): Invoice 12900, API 0, Chargeback 12900,
  amortisation +500 -> 13400, run-priced 0, estimates +3.33, labour +33.33, idle 0, showback 13436.67.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from tests import prefetch
from tests.dbt.test_chargeback_basis import build_home, cents

POLICIES = {
    "chargeback_basis: amortised ": "chargeback_basis: billed ",
    "unused_commitment_policy: unallocated ": "unused_commitment_policy: spread ",
}


def build_showback_home(root: Path) -> dict:
    """The chargeback-basis fixture with this module's policies (a tests/prefetch.py job)."""
    return build_home(root, POLICIES)


@pytest.fixture(scope="module")
def showback_bridge_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("showback_bridge", tmp_path_factory)


@pytest.fixture(scope="module")
def con(showback_bridge_run: dict):
    run = showback_bridge_run
    assert run["ok"], run["reason"]
    con = duckdb.connect(str(run["home"] / "serving.duckdb"), read_only=True)
    yield con
    con.close()


def test_billed_basis_and_unused_spread(con):
    rows = {t: (b, cents(bc), cents(ac), cents(u), cents(tc)) for t, b, bc, ac, u, tc in con.execute(
        "select team_id, basis, billed_cost, amortised_cost, unused_commitment, total_cost "
        "from fct_chargeback_monthly where currency = 'USD'").fetchall()}
    assert rows == {
        # team: basis, billed_cost, amortised_cost, unused_commitment (billed basis: 0), total_cost
        "inference": ("billed", Decimal("0.00"), Decimal("10960.00"), Decimal("0.00"), Decimal("0.00")),
        "training": ("billed", Decimal("1900.00"), Decimal("2440.00"), Decimal("0.00"), Decimal("1900.00")),
        "(unallocated)": ("billed", Decimal("11000.00"), Decimal("0.00"), Decimal("0.00"), Decimal("11000.00")),
    }


def test_showback_per_team(con):
    got = {(t, c): cents(a) for t, c, a in con.execute(
        "select team_id, currency, sum(amount) from fct_showback_monthly group by all").fetchall()}
    assert got == {
        # 10960 amortised + 3.33 estimate (storage 100 x 1/30 active days) + 33.33 labour (1000 x 1/30)
        ("inference", "USD"): Decimal("10996.67"),
        ("training", "USD"): Decimal("2440.00"),
        ("(unallocated)", "USD"): Decimal("0.00"),
        ("inference", "EUR"): Decimal("660.00"),  # 600 + 160 x 600 / 1600
        ("analytics", "EUR"): Decimal("1100.00"),  # 1000 + 160 x 1000 / 1600
    }
    labels = con.execute(
        "select component, cost_basis, bridge_step from fct_showback_monthly "
        "where team_id = 'inference' and currency = 'USD' order by all").fetchall()
    assert labels == [
        ("direct_cost", "amortised", "Chargeback"),
        ("platform_labor", "estimate", "Platform labour"),
        ("shared_cost", "amortised", "Chargeback"),
        ("storage", "estimate", "Estimates"),
        ("tax", "amortised", "Chargeback"),
        ("unused_commitment", "amortised", "Chargeback"),
    ]


def test_bridge_on_the_billed_basis(con):
    steps = con.execute("select step_order, step, amount, running_total from fct_cost_bridge "
                        "where currency = 'USD' order by step_order").fetchall()
    assert [(o, s, cents(a), cents(r)) for o, s, a, r in steps] == [
        (1, "Invoice", Decimal("12900.00"), Decimal("12900.00")),
        (2, "API spend", Decimal("0.00"), Decimal("12900.00")),
        (3, "Chargeback", Decimal("12900.00"), Decimal("12900.00")),
        (4, "Amortisation adjustments", Decimal("500.00"), Decimal("13400.00")),
        (5, "Run-priced work not on a bill", Decimal("0.00"), Decimal("13400.00")),
        (6, "Owned hardware", Decimal("0.00"), Decimal("13400.00")),
        (7, "Estimates", Decimal("3.33"), Decimal("13403.33")),
        (8, "Platform labour", Decimal("33.33"), Decimal("13436.67")),
        (9, "Idle not on a bill", Decimal("0.00"), Decimal("13436.67")),
        (10, "All-in showback", Decimal("13436.67"), Decimal("13436.67")),
    ]


def test_bridge_ties_to_the_marts(con):
    """Per month and currency: first row = the invoice, Chargeback = Σ total_cost, last = Σ showback."""
    rows = con.execute("""
        with b as (select period, currency, min_by(amount, step_order) as first_amount,
                          max_by(running_total, step_order) as last_total,
                          max(case when step = 'Chargeback' then running_total end) as chargeback
                   from fct_cost_bridge group by all),
             i as (select cast(BillingPeriodStart as date) as period, BillingCurrency as currency,
                          sum(BilledCost) as invoice from ledger_focus group by all),
             c as (select billing_period_start as period, currency, sum(total_cost) as total
                   from fct_chargeback_monthly group by all),
             s as (select period, currency, sum(amount) as showback from fct_showback_monthly group by all)
        select b.*, i.invoice, c.total, s.showback
        from b join i using (period, currency) join c using (period, currency) join s using (period, currency)
    """).fetchall()
    assert len(rows) == 2  # USD and EUR, 2025-04
    for _period, _currency, first, last, charged, invoice, total, showback in rows:
        assert cents(first) == cents(invoice)
        assert cents(charged) == cents(total)
        assert cents(last) == cents(showback)


def test_team_budget_against_both_figures(con):
    row = con.execute(
        "select chargeback_total, showback_total, budget_remaining_chargeback, budget_remaining_showback "
        "from fct_team_budget_monthly where team_id = 'inference' and currency = 'USD'").fetchone()
    # budget 9000: billed chargeback 0 -> 9000 left; showback 10996.67 -> 1996.67 over
    assert [cents(v) for v in row] == [Decimal("0.00"), Decimal("10996.67"), Decimal("9000.00"), Decimal("-1996.67")]
