"""Public FOCUS files of several providers, sliced (tests/data/public/focus/provider_slices/PROVENANCE.md):
real FOCUS 1.0 rows of AWS, Microsoft (Azure) and Oracle (OCI), and FOCUS 1.3 provider samples of AWS, Microsoft
Azure and Google Cloud (synthetic, with provider allocation, ContractApplied and EUR pricing) plus the Google
Cloud Contract Commitment dataset. One refresh of all of them together.

Expected figures are computed here from the files themselves with the csv module and Decimal, never from
the pipeline: each file's row count and Σ BilledCost / Σ EffectiveCost, and for every row with a
cost-center tag (`CostCenter`, `cost-center`) the team the registry gives that cost centre. A line the
provider allocated (AllocatedMethodId) goes to the cost centre its AllocatedTags name, before its own
Tags (docs/cost_model.md). Registry: payments cc-1042, data cc-2087, platform cc-3110 (the 1.3 samples),
finance 1234 (the Azure 1.0 rows).
"""

from __future__ import annotations

import csv
import json
import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from tests import golden_cases, prefetch
from tests.golden_cases import cents, rows

SLICES = Path(__file__).resolve().parents[1] / "data" / "public" / "focus" / "provider_slices"
CHARGE_FILES = sorted(p for p in SLICES.glob("focus_1.*_slice.csv") if "contractcommitment" not in p.name)
COMMITMENTS = SLICES / "focus_1.3_gcp_contractcommitment_synthetic_slice.csv"
COST_CENTRES = {"cc-1042": "payments", "cc-2087": "data", "cc-3110": "platform", "1234": "finance"}
TEAMS = """teams:
  - {id: payments, name: Payments, cost_center: cc-1042}
  - {id: data, name: Data, cost_center: cc-2087}
  - {id: platform, name: Platform, cost_center: cc-3110}
  - {id: finance, name: Finance, cost_center: '1234'}
"""
COST_CENTER_KEYS = ("CostCenter", "cost-center")


def file_rows(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def cost_centre(tags: str) -> str | None:
    """The cost-centre value of a Tags / AllocatedTags cell, None without one (or not a JSON object)."""
    try:
        parsed = json.loads(tags) if tags.strip() else {}
    except ValueError:
        return None
    if not isinstance(parsed, dict):
        return None
    return next((str(parsed[k]) for k in COST_CENTER_KEYS if k in parsed), None)


def build_slices_run(root: Path) -> dict:
    """One refresh of every slice with the cost-centre registry (a tests/prefetch.py job)."""
    (root / "inputs" / "billing").mkdir(parents=True)
    (root / "inputs" / "registry").mkdir()
    for path in (*CHARGE_FILES, COMMITMENTS):
        shutil.copy(path, root / "inputs" / "billing" / path.name)
    (root / "inputs" / "registry" / "teams.yaml").write_text(TEAMS)
    return golden_cases.refresh(root, root / "inputs")


def build_slices_round_trip(root: Path, public_slices: dict) -> dict:
    """The slices' export without splits, loaded again as a bill with the same registry: a refresh into a
    fresh home (a tests/prefetch.py job, after `build_slices_run`)."""
    from warehouse.export import export_focus

    assert public_slices["ok"], public_slices["reason"]
    inputs = root / "inputs"
    (inputs / "billing").mkdir(parents=True)
    (inputs / "registry").mkdir()
    (inputs / "registry" / "teams.yaml").write_text(TEAMS)
    export_focus(public_slices["home"] / "serving.duckdb", inputs / "billing", fmt="csv", splits=False)
    return golden_cases.refresh(root, inputs)


@pytest.fixture(scope="module")
def public_slices_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("public_slices", tmp_path_factory)


@pytest.fixture(scope="module")
def con(public_slices_run: dict):
    with golden_cases.published(public_slices_run) as con:
        yield con


@pytest.fixture(scope="module")
def slices_round_trip(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("slices_round_trip", tmp_path_factory)


def test_the_slices_are_small_and_of_several_providers() -> None:
    providers = set()
    for path in CHARGE_FILES:
        data = file_rows(path)
        assert 0 < len(data) < 200, path.name
        providers |= {r["ProviderName"] for r in data}
    assert providers == {"AWS", "Microsoft", "Oracle", "Google Cloud", "Microsoft Azure"}


def test_every_file_loads_whole_and_totals_match_to_the_cent(con) -> None:
    got = {r["x_source_file"]: r for r in rows(con, "select x_source_file, count(*) as n, sum(BilledCost) as billed, "
                                                    "sum(EffectiveCost) as effective from ledger_focus group by all")}
    assert set(got) == {p.name for p in CHARGE_FILES}
    for path in CHARGE_FILES:
        data = file_rows(path)
        billed = sum(Decimal(r["BilledCost"]) for r in data)
        effective = sum(Decimal(r["EffectiveCost"] or r["BilledCost"]) for r in data)
        mine = got[path.name]
        assert mine["n"] == len(data), path.name
        assert (cents(mine["billed"]), cents(mine["effective"])) == (cents(billed), cents(effective)), path.name


def test_every_cost_center_tag_reaches_its_team(con) -> None:
    want: dict[tuple[str, int], str] = {}
    for path in CHARGE_FILES:
        for line, r in enumerate(file_rows(path), start=2):
            allocated = cost_centre(r.get("AllocatedTags") or "") if r.get("AllocatedMethodId") else None
            centre = allocated or cost_centre(r["Tags"])
            if centre is not None:
                want[(path.name, line)] = COST_CENTRES[centre]
    assert len(want) == 70  # 36 Azure 1.0 rows; 12 AWS, 12 Google Cloud and 10 Azure 1.3 rows
    got = {(r["x_source_file"], r["x_source_line"]): r["x_team"]
           for r in rows(con, "select x_source_file, x_source_line, x_team from ledger_focus")}
    wrong = {k: (got.get(k), team) for k, team in want.items() if got.get(k) != team}
    assert wrong == {}


def test_provider_allocation_and_contract_applied_reach_the_export(con) -> None:
    sent = [(p.name, r) for p in CHARGE_FILES for r in file_rows(p)]
    allocated = sorted((r["AllocatedMethodId"], r["AllocatedTags"]) for _n, r in sent if r.get("AllocatedMethodId"))
    assert len(allocated) == 8  # split-even: AWS 2, Google Cloud 2, Azure 2; split-proportional: Google Cloud 1, Azure 1
    got = rows(con, "select AllocatedMethodId, AllocatedTags, x_allocation_source, x_team from fct_focus_export "
                    "where x_allocation_source = 'provider'")
    assert sorted((r["AllocatedMethodId"], r["AllocatedTags"]) for r in got) == allocated
    applied = sorted(r["ContractApplied"] for _n, r in sent if r.get("ContractApplied"))
    assert len(applied) == 9  # 3 per 1.3 provider
    exported = rows(con, "select ContractApplied from fct_focus_export where ContractApplied is not null")
    assert sorted(r["ContractApplied"] for r in exported) == applied
    basis = {r["x_allocation_basis"] for r in rows(
        con, "select x_allocation_basis from ledger_focus where x_extra ->> 'AllocatedMethodId' is not null")}
    assert basis == {"provider allocation: split-even", "provider allocation: split-proportional"}


def test_contract_applied_gives_committed_vs_used(con) -> None:
    """Google Cloud: CC-GCC-SPEND-0001 (Spend, 250,000) drawn by 106.96304543256 + 58.1574375 = 165.12048293256;
    CC-GCC-STORAGE-0002 (Spend, 48,000) by 135.4517748; CC-GCC-COMPUTE-0003 (Usage) by nothing. AWS names
    CC-EA-SPEND-0001 (13.871898 + 3.34417005 = 17.21606805) and CC-EA-COMPUTE-0003 (0.0864, 1 Hours), which
    no Contract Commitment file states: rows with x_in_dataset false; so does Azure (CC-MACC-SPEND-0001
    44.5592061 + 0.0072 = 44.5664061, CC-MACC-STORAGE-0002 124.615632816)."""
    got = {r["ContractCommitmentId"]: r for r in rows(con, "select * from fct_contract_commitment_usage")}
    assert set(got) == {"CC-GCC-SPEND-0001", "CC-GCC-STORAGE-0002", "CC-GCC-COMPUTE-0003",
                        "CC-EA-SPEND-0001", "CC-EA-COMPUTE-0003", "CC-MACC-SPEND-0001", "CC-MACC-STORAGE-0002"}
    spend = got["CC-GCC-SPEND-0001"]
    assert (spend["x_applied_lines"], spend["x_applied_cost"]) == (2, Decimal("165.12048293256"))
    assert spend["x_remaining_cost"] == Decimal("250000") - Decimal("165.12048293256")
    assert got["CC-GCC-STORAGE-0002"]["x_applied_cost"] == Decimal("135.4517748")
    assert (got["CC-GCC-COMPUTE-0003"]["x_applied_lines"], got["CC-GCC-COMPUTE-0003"]["x_used_pct"]) == (0, 0)
    ea = got["CC-EA-SPEND-0001"]
    assert (ea["x_in_dataset"], ea["x_committed_cost"], ea["x_applied_cost"]) == (False, None, Decimal("17.21606805"))
    assert (got["CC-MACC-SPEND-0001"]["x_applied_lines"], got["CC-MACC-SPEND-0001"]["x_applied_cost"]) == (
        2, Decimal("44.5664061"))
    assert got["CC-MACC-STORAGE-0002"]["x_applied_cost"] == Decimal("124.615632816")
    compute = got["CC-EA-COMPUTE-0003"]
    assert (compute["x_applied_quantity"], compute["x_unit"]) == (Decimal("1"), "Hours")
    # never cost: the ledger holds only the charge files' rows
    n = sum(len(file_rows(p)) for p in CHARGE_FILES)
    assert con.execute("select count(*) from ledger_focus").fetchone()[0] == n


def test_export_round_trip_gives_the_same_ledger(slices_round_trip: dict, con) -> None:
    """The export without splits, loaded again as a bill with the same registry (`build_slices_round_trip`),
    gives the same lines per source team and the same totals to the cent."""
    again = slices_round_trip
    query = ("select BillingCurrency, x_team, count(*) as n, sum(BilledCost) as billed, sum(EffectiveCost) as eff "
             "from ledger_focus group by all order by all")
    with golden_cases.published(again) as con2:
        second = [(r["BillingCurrency"], r["x_team"], r["n"], cents(r["billed"]), cents(r["eff"]))
                  for r in rows(con2, query)]
    first = [(r["BillingCurrency"], r["x_team"], r["n"], cents(r["billed"]), cents(r["eff"])) for r in rows(con, query)]
    assert second == first
