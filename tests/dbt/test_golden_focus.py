"""The FOCUS 1.3 golden ledger: the real pipeline on tests/golden_focus/inputs/, every figure by hand.

Three providers' FOCUS 1.3 files (tag keys `CostCenter`, `cost-center`, `Cost Center`), two lines the provider
allocated (split-proportional; AllocatedTags naming a cost centre and a workload), a shared CloudTrail line, an
EUR-priced line billed in USD, and a Contract Commitment file. Every expected figure is derived in
tests/golden_focus/EXPECTED.md (section numbers in the comments). Money to the cent; whole tables compared,
so a row too many or too few fails.
"""

from __future__ import annotations

import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from tests import golden_cases, prefetch
from tests.golden_cases import cents, rows

REPO = Path(__file__).resolve().parents[2]
INPUTS = REPO / "tests" / "golden_focus" / "inputs"
PROVIDER = "provider allocation: split-proportional"
LEDGER = ("select ResourceId, BilledCost, EffectiveCost, x_team, x_allocation_basis, x_workload_id, "
          "x_extra ->> 'AllocatedMethodId' as method, x_extra ->> 'AllocatedTags' as allocated_tags, "
          "x_extra ->> 'ContractApplied' as applied, x_extra ->> 'PricingCurrency' as pricing_currency, "
          "x_extra ->> 'PricingCurrencyEffectiveCost' as pricing_cost from ledger_focus")


def build_golden_focus(root: Path) -> dict:
    """One refresh of tests/golden_focus/inputs into a fresh home (a tests/prefetch.py job)."""
    return golden_cases.refresh(root, INPUTS)


@pytest.fixture(scope="module")
def golden_focus_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("golden_focus", tmp_path_factory)


@pytest.fixture(scope="module")
def con(golden_focus_run: dict):
    with golden_cases.published(golden_focus_run) as con:
        yield con


def ledger_lines(con) -> dict[tuple[str, Decimal], tuple]:
    """ResourceId and BilledCost (cents) -> the line's money, team, basis, workload and 1.3 columns."""
    out = {}
    for r in rows(con, LEDGER):
        out[(r["ResourceId"], cents(r["BilledCost"]))] = (
            cents(r["EffectiveCost"]), r["x_team"], r["x_allocation_basis"], r["x_workload_id"], r["method"],
            r["allocated_tags"], r["applied"], r["pricing_currency"],
            None if r["pricing_cost"] is None else cents(r["pricing_cost"]))
    return out


def test_lines_and_teams(con) -> None:
    # EXPECTED.md § 1: CamelCase, kebab and spaced cost-centre keys; the provider's allocation before the tags
    got = {k: v[:4] for k, v in ledger_lines(con).items()}
    assert got == {
        ("i-payments01", Decimal("100.00")): (Decimal("100.00"), "payments", "tag", None),
        ("shared-host-1", Decimal("30.00")): (Decimal("30.00"), "payments", PROVIDER, None),
        ("shared-host-1", Decimal("20.00")): (Decimal("20.00"), "data", PROVIDER, "search"),
        ("trail-org", Decimal("50.00")): (Decimal("50.00"), "(unallocated)", "none", None),
        ("//compute.googleapis.com/projects/golden-data-1/instances/etl-1", Decimal("60.00")):
            (Decimal("60.00"), "data", "tag", None),
        ("/subscriptions/sub-platform-1/vm/build-1", Decimal("40.00")): (Decimal("40.00"), "platform", "tag", None),
    }
    # 100 + 30 + 20 + 50 + 60 + 40 = 300.00
    assert con.execute("select sum(BilledCost), sum(EffectiveCost) from ledger_focus").fetchone() == (300, 300)
    assert rows(con, "select * from fct_unmatched_tag_keys") == []


def test_chargeback_per_team(con) -> None:
    # EXPECTED.md § 2: direct 130 / 80 / 40; shared 50 x 130/250 = 26, 50 x 80/250 = 16, 50 x 40/250 = 8
    got = {r["team_id"]: (cents(r["direct_cost"]), cents(r["shared_cost"]), cents(r["total_cost"]))
           for r in rows(con, "select * from fct_chargeback_monthly")}
    assert got == {"payments": (Decimal("130.00"), Decimal("26.00"), Decimal("156.00")),
                   "data": (Decimal("80.00"), Decimal("16.00"), Decimal("96.00")),
                   "platform": (Decimal("40.00"), Decimal("8.00"), Decimal("48.00"))}


def test_chargeback_lines_say_the_provider_allocated(golden_focus_run: dict) -> None:
    # EXPECTED.md § 2, methods (an intermediate model: read from the working database)
    assert golden_focus_run["ok"], golden_focus_run["reason"]
    con = duckdb.connect(str(golden_focus_run["home"] / "ledger.duckdb"), read_only=True)
    try:
        got = sorted((r["team_id"], r["method"], cents(r["amount"])) for r in rows(
            con, "select team_id, method, sum(amount) as amount from intermediate.int_chargeback_lines "
                 "where basis = 'amortised' group by all"))
    finally:
        con.close()
    assert got == sorted([("data", PROVIDER, Decimal("20.00")), ("data", "proportional-direct-cost", Decimal("16.00")),
                   ("data", "tag", Decimal("60.00")),
                   ("payments", PROVIDER, Decimal("30.00")), ("payments", "proportional-direct-cost", Decimal("26.00")),
                   ("payments", "tag", Decimal("100.00")),
                   ("platform", "proportional-direct-cost", Decimal("8.00")), ("platform", "tag", Decimal("40.00"))])


def test_export_keeps_the_provider_allocation_and_the_eur_price(con) -> None:
    # EXPECTED.md § 3
    export = rows(con, "select * from fct_focus_export")
    assert len(export) == 8
    assert cents(sum(r["BilledCost"] for r in export)) == Decimal("300.00")
    provider = sorted((r["x_team"], cents(r["BilledCost"]), r["AllocatedMethodId"], r["AllocatedTags"])
                      for r in export if r["x_allocation_source"] == "provider")
    assert provider == [("data", Decimal("20.00"), "split-proportional", '{"workload":"search"}'),
                        ("payments", Decimal("30.00"), "split-proportional", '{"CostCenter":"cc-1042"}')]
    ours = sorted((r["x_team"], cents(r["BilledCost"])) for r in export if r["x_allocation_source"] == "gpu-ledger")
    assert ours == [("data", Decimal("16.00")), ("payments", Decimal("26.00")), ("platform", Decimal("8.00"))]
    [azure] = [r for r in export if r["PricingCurrency"] == "EUR"]
    assert (cents(azure["BilledCost"]), azure["BillingCurrency"], cents(azure["PricingCurrencyEffectiveCost"]),
            azure["x_team"]) == (Decimal("40.00"), "USD", Decimal("36.80"), "platform")
    teams: dict[str, Decimal] = {}
    for r in export:
        teams[r["x_team"]] = teams.get(r["x_team"], Decimal(0)) + r["EffectiveCost"]
    assert {t: cents(v) for t, v in teams.items()} == {
        "payments": Decimal("156.00"), "data": Decimal("96.00"), "platform": Decimal("48.00")}


COMMITTED_VS_USED = ("select ContractCommitmentId, ContractCommitmentCategory, x_committed_cost, x_applied_lines, "
                     "x_applied_cost, x_applied_quantity, x_remaining_cost, x_remaining_quantity, x_used_pct, "
                     "x_in_dataset from fct_contract_commitment_usage order by ContractCommitmentId")


def committed_vs_used(con) -> list[tuple]:
    return [(r["ContractCommitmentId"], r["ContractCommitmentCategory"], cents(r["x_committed_cost"]),
             r["x_applied_lines"], cents(r["x_applied_cost"]), cents(r["x_applied_quantity"]),
             cents(r["x_remaining_cost"]), cents(r["x_remaining_quantity"]), cents(r["x_used_pct"]), r["x_in_dataset"])
            for r in rows(con, COMMITTED_VS_USED)]


def test_committed_vs_used(con) -> None:
    # EXPECTED.md § 4: CC-SPEND-1 100 + 40 = 140 of 1000 (14 %); CC-HOURS-1 40 of 400 Hours (10 %); CC-IDLE-1 nothing
    d = Decimal
    assert committed_vs_used(con) == [
        ("CC-HOURS-1", "Usage", d("600.00"), 1, d("60.00"), d("40.00"), d("540.00"), d("360.00"), d("10.00"), True),
        ("CC-IDLE-1", "Spend", d("500.00"), 0, d("0.00"), None, d("500.00"), None, d("0.00"), True),
        ("CC-SPEND-1", "Spend", d("1000.00"), 2, d("140.00"), None, d("860.00"), None, d("14.00"), True),
    ]
    assert con.execute("select count(*) from ledger_focus").fetchone() == (6,)


def build_golden_focus_round_trip(root: Path, golden_focus: dict) -> dict:
    """The golden ledger exported (CSV, no splits) and loaded again with the same registry and commitments
    into a fresh home (a tests/prefetch.py job, after `golden_focus`)."""
    from warehouse.export import export_focus

    assert golden_focus["ok"], golden_focus["reason"]
    inputs = root / "inputs"
    shutil.copytree(INPUTS / "registry", inputs / "registry")
    (inputs / "billing").mkdir()
    shutil.copy(INPUTS / "billing" / "focus_1.3_golden_contractcommitment.csv", inputs / "billing")
    written = export_focus(golden_focus["home"] / "serving.duckdb", inputs / "billing", fmt="csv", splits=False)
    return {**golden_cases.refresh(root, inputs), "written": written}


@pytest.fixture(scope="module")
def golden_focus_round_trip(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("golden_focus_round_trip", tmp_path_factory)


def test_export_round_trip_gives_the_same_ledger(golden_focus_round_trip: dict, con) -> None:
    # EXPECTED.md § 5: export (CSV, one row per ledger line) -> load again -> identical ledger, difference 0
    again = golden_focus_round_trip
    [path] = again["written"]
    assert path.read_text().count("\n") == 7  # header + 6 lines
    with golden_cases.published(again) as con2:
        assert ledger_lines(con2) == ledger_lines(con)
        chargeback = "select team_id, total_cost, direct_cost, shared_cost from fct_chargeback_monthly order by 1"
        assert [tuple(cents(v) if not isinstance(v, str) else v for v in r.values()) for r in rows(con2, chargeback)] \
            == [tuple(cents(v) if not isinstance(v, str) else v for v in r.values()) for r in rows(con, chargeback)]
        assert committed_vs_used(con2) == committed_vs_used(con)
