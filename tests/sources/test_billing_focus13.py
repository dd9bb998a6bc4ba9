"""FOCUS 1.3: tag keys as the clouds spell them, the Contract Commitment dataset, the 1.3 export columns.

Constructed fixtures (tests/sources/fixtures/focus_1.3_constructed/README.md). One refresh of the cost
and usage file plus the commitment file, registry: teams research (cost_center CC-1001) and platform
(CC-1002), no policies block (so the built-in team keys: team, team_name, owner_team, business_unit,
cost_center). USD, billing period 2026-05:

 line  provider  BilledCost  EffectiveCost  Tags                        key -> normalised   team
  2    AWS         100.00       90.00      {"CostCenter": "CC-1001"}   cost_center          research
  3    Azure        50.00       50.00      {"CostCenter": "CC-1002"}   cost_center          platform
  4    GCP          30.00       30.00      {"cost-center": "cc-1001"}  cost_center          research
  5    GCP          20.00       20.00      {"Cost Center": "CC-1002"}  cost_center          platform
  6    AWS          10.00       10.00      {"TeamName": "research"}    team_name            research
  7    Azure         5.00        5.00      {"COST_CENTER": "CC-1001"}  cost_center          research
  8    AWS           7.00        7.00      {"OwningSquad": "platform"} owning_squad (no key) (unallocated)

After: research billed 100 + 30 + 10 + 5 = 145.00, effective 90 + 30 + 10 + 5 = 135.00; platform
50 + 20 = 70.00 on both; (unallocated) 7.00. Total 222.00 = the file.
Before (keys lower-cased, '-' and ' ' as '_' only): `CostCenter` -> costcenter and `TeamName` ->
teamname matched nothing, so research had 30 + 5 = 35.00 billed, platform 20.00 and (unallocated)
100 + 50 + 10 + 7 = 167.00: 75 % of the bill had no team.
fct_unmatched_tag_keys lists OwningSquad (7.00, on (unallocated)) and GCP's `owner` (line 4, 30.00, charged
to research by cost-center): owner-like keys no configured key reads.
"""

from __future__ import annotations

import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from reference.tags import looks_like_ownership_key
from sources.billing import contract_commitments, focus
from sources.catalog import recognise
from tests import prefetch
from warehouse.reference import tag_key_norm

FIXTURES = Path(__file__).parent / "fixtures" / "focus_1.3_constructed"
COMMITMENTS = FIXTURES / "contract_commitment_constructed.csv"
CHARGES = FIXTURES / "costandusage_tag_keys_constructed.csv"
TEAMS = ("teams:\n  - id: research\n    name: Research\n    cost_center: CC-1001\n"
         "  - id: platform\n    name: Platform\n    cost_center: CC-1002\n")


@pytest.mark.parametrize(("key", "norm"), [
    ("CostCenter", "cost_center"), ("cost-center", "cost_center"), ("Cost Center", "cost_center"),
    ("costCenter", "cost_center"), ("COST_CENTER", "cost_center"), (" cost_center ", "cost_center"),
    ("Cost-Center", "cost_center"), ("cost  center", "cost_center"), ("GPUTeam", "gpu_team"),
    ("TeamName", "team_name"), ("BusinessUnit", "business_unit"), ("WorkloadId", "workload_id"),
    ("ApplicationID", "application_id"), ("team", "team"), ("TEAM", "team"), ("k8sCluster", "k8s_cluster"),
    # AWS CUR's user-defined cost allocation tags (`resourceTags/user:team`); AWS-generated keys keep `aws:`
    ("user:team", "team"), ("user:CostCenter", "cost_center"), ("User:cost-center", "cost_center"),
    ("aws:createdBy", "aws:created_by"), ("team:user", "team:user"),
])
def test_tag_keys_normalise_however_they_are_written(key: str, norm: str) -> None:
    assert tag_key_norm(key) == norm


def test_the_dbt_macro_normalises_like_python() -> None:
    """The DuckDB rendering of the generated tag_key_norm macro on the same keys."""
    text = (Path(__file__).parents[2] / "dbt" / "macros" / "billing_defaults.sql").read_text()
    body = text.split("{% macro duckdb__tag_key_norm(expr) %}")[1].split("{% endmacro %}")[0]
    keys = ["CostCenter", "cost-center", "Cost Center", "costCenter", "COST_CENTER", "GPUTeam", "aks-managed-poolName",
            "_x_", "HTTPServer2Name", "Cost department", "user:team", "USER:CostCenter", "aws:createdBy", "a user:b"]
    con = duckdb.connect()
    got = [con.execute(f"select {body.replace('{{ expr }}', '?')}", [k]).fetchone()[0] for k in keys]
    assert got == [tag_key_norm(k) for k in keys]


@pytest.mark.parametrize(("key", "owner_like"), [
    ("owner", True), ("owning_squad", True), ("cost_center", True), ("costcenter", True), ("project", True),
    ("app", True), ("business_unit", True), ("environment", False), ("happy", False), ("teamwork", False),
    ("aks_managed_pool_name", False),
])
def test_ownership_keys_are_recognised_by_whole_words(key: str, owner_like: bool) -> None:
    assert looks_like_ownership_key(key) is owner_like


def test_contract_commitment_dataset_is_its_own_format_not_billing() -> None:
    assert recognise(COMMITMENTS, "billing").name == "focus_contract_commitment"
    assert not focus.detect(COMMITMENTS, COMMITMENTS.read_bytes())
    assert recognise(CHARGES, "billing").name == "focus"


def test_contract_commitments_parse_typed() -> None:
    out = contract_commitments.parse(COMMITMENTS)
    assert out.rejects == [] and out.warnings == []
    table = out.tables["contract_commitments"].to_pylist()
    assert [r["_source_line"] for r in table] == [2, 3, 4, 5]
    # USD 250,000 + 180,000 + 280,460.16 = 710,460.16; EUR 100,000
    totals: dict[str, Decimal] = {}
    for r in table:
        totals[r["BillingCurrency"]] = totals.get(r["BillingCurrency"], Decimal(0)) + Decimal(r["ContractCommitmentCost"])
    assert totals == {"USD": Decimal("710460.16"), "EUR": Decimal("100000")}
    ri = table[2]
    assert ri["ContractCommitmentCategory"] == "Usage" and Decimal(ri["ContractCommitmentQuantity"]) == Decimal("4380000")
    assert str(ri["ContractCommitmentPeriodStart"]) == "2026-05-01 00:00:00"
    assert table[0]["ContractCommitmentQuantity"] is None


def test_a_bad_commitment_row_is_a_reject_with_its_line(tmp_path: Path) -> None:
    lines = COMMITMENTS.read_text().splitlines()
    lines[2] = lines[2].replace(",180000,", ",lots,").replace("2027-01-31T00:00:00Z,CONTRACT", "2025-01-31T00:00:00Z,CONTRACT")
    bad = tmp_path / "cc.csv"
    bad.write_text("\n".join(lines) + "\n")
    out = contract_commitments.parse(bad)
    assert sorted((r.line, r.rule, r.column) for r in out.rejects) == [
        (3, "non_numeric", "ContractCommitmentCost"), (3, "period_reversed", "ContractCommitmentPeriodEnd")]
    assert [r["_source_line"] for r in out.tables["contract_commitments"].to_pylist()] == [2, 4, 5]


# --------------------------------------------------------------------------------------------------
# One refresh: the tag keys reach their teams, the commitments are their own mart, the 1.3 export
# --------------------------------------------------------------------------------------------------

def build_focus13_run(root: Path) -> dict:
    """One refresh of the cost and usage file plus the commitment file (a tests/prefetch.py job)."""
    from pipelines.cli import execute_refresh

    (root / "inputs" / "billing").mkdir(parents=True)
    (root / "inputs" / "registry").mkdir()
    shutil.copy(CHARGES, root / "inputs" / "billing")
    shutil.copy(COMMITMENTS, root / "inputs" / "billing")
    (root / "inputs" / "registry" / "teams.yaml").write_text(TEAMS)
    ok, _run_id, reason = execute_refresh(root / "home", root / "inputs", docs=False)
    return {"home": root / "home", "ok": ok, "reason": reason}


@pytest.fixture(scope="module")
def focus13_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("focus13", tmp_path_factory)


@pytest.fixture(scope="module")
def serving(focus13_run: dict):
    assert focus13_run["ok"], focus13_run["reason"]
    con = duckdb.connect(str(focus13_run["home"] / "serving.duckdb"), read_only=True)
    yield con
    con.close()


def test_cost_center_spelt_by_every_cloud_reaches_its_team(serving) -> None:
    got = {t: (b, e) for t, b, e in serving.execute(
        "select x_team, sum(BilledCost), sum(EffectiveCost) from ledger_focus group by all").fetchall()}
    assert got == {"research": (Decimal("145"), Decimal("135")), "platform": (Decimal("70"), Decimal("70")),
                   "(unallocated)": (Decimal("7"), Decimal("7"))}


def test_owner_like_keys_nobody_reads_are_listed_with_their_cost(serving) -> None:
    rows = serving.execute(
        "select tag_key_as_written, tag_key, currency, charged_to, lines, billed_cost from fct_unmatched_tag_keys "
        "order by tag_key").fetchall()
    assert rows == [("owner", "owner", "USD", "research", 1, Decimal("30")),
                    ("OwningSquad", "owning_squad", "USD", "(unallocated)", 1, Decimal("7"))]


def test_commitments_are_a_mart_and_never_charges(serving) -> None:
    rows = serving.execute("select ContractCommitmentId, BillingCurrency, ContractCommitmentCost "
                           "from fct_contract_commitments order by ContractCommitmentId").fetchall()
    assert len(rows) == 4
    assert sum(c for _i, cur, c in rows if cur == "USD") == Decimal("710460.16")
    # the ledger holds the 7 charge lines only: 100 + 50 + 30 + 20 + 10 + 5 + 7 = 222
    assert serving.execute("select count(*), sum(BilledCost) from ledger_focus").fetchone() == (7, Decimal("222"))


def test_contract_applied_gives_committed_vs_used_per_commitment(serving) -> None:
    """Line 2 (AWS, 100.00 billed) carries ContractApplied {"Elements": [{"ContractId": "CONTRACT-2026-0001",
    "ContractCommitmentId": "CC-SPEND-0001", "ContractCommitmentAppliedCost": 90.0}]}; no other line names a
    commitment. CC-SPEND-0001 is a Spend commitment of 250,000.00 USD, so used 90.00, remaining
    250,000 - 90 = 249,910.00, used 100 x 90 / 250,000 = 0.036 %. The three other commitments: nothing applied,
    remaining = committed. Applied amounts never add to the ledger (still 222.00 over 7 lines)."""
    got = {r[0]: r[1:] for r in serving.execute(
        "select ContractCommitmentId, x_applied_lines, x_applied_cost, x_remaining_cost, round(x_used_pct, 6), "
        "x_in_dataset from fct_contract_commitment_usage").fetchall()}
    assert got["CC-SPEND-0001"] == (1, Decimal("90"), Decimal("249910"), Decimal("0.036"), True)
    assert got["CC-COMPUTE-0002"] == (0, Decimal("0"), Decimal("180000"), Decimal("0"), True)
    assert got["CC-MACC-0003"] == (0, Decimal("0"), Decimal("100000"), Decimal("0"), True)
    assert len(got) == 4
    assert serving.execute("select count(*), sum(BilledCost) from ledger_focus").fetchone() == (7, Decimal("222"))


def test_export_carries_the_13_columns_and_writes_focus_timestamps(serving, tmp_path: Path) -> None:
    rows = serving.execute(
        "select ResourceId, ServiceProviderName, HostProviderName, BillingAccountType, SubAccountType, "
        "ServiceSubcategory, SkuMeter, PricingCurrency, PricingCurrencyEffectiveCost, ContractApplied, "
        "CapacityReservationId, CapacityReservationStatus from fct_focus_export where ResourceId in ('i-aws-1', 'vm-az-1') "
        "order by ResourceId").fetchall()
    aws, azure = rows
    assert aws[1:9] == ("AWS", "AWS", "Billing Account", "Account", "Virtual Machines", "Compute", "USD", Decimal("90"))
    assert '"ContractCommitmentId": "CC-SPEND-0001"' in aws[9]
    # a marketplace seller on Azure: its own ServiceProviderName kept, the host from the source too
    assert azure[1:3] == ("Contoso", "Microsoft")
    assert azure[10:] == ("cr-0001", "Used")


def test_a_13_file_without_provider_name_and_odd_case_keeps_its_names(tmp_path: Path) -> None:
    """FOCUS 1.3 deprecates ProviderName: ServiceProviderName stands in; 1.3 columns in x_extra keep their
    FOCUS spelling whatever case the file writes (the export reads them by name)."""
    import csv
    import json

    rows = list(csv.reader(CHARGES.open(newline="")))
    drop = rows[0].index("ProviderName")
    rows = [[c for j, c in enumerate(r) if j != drop] for r in rows]
    rows[0] = [c.lower() if c in ("ServiceProviderName", "SkuMeter") else c for c in rows[0]]
    path = tmp_path / "focus13_no_provider.csv"
    with path.open("w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    table = focus.parse(path).tables["billing_charges"].to_pylist()
    assert [r["ProviderName"] for r in table] == ["AWS", "Contoso", "Google Cloud", "Google Cloud", "AWS",
                                                  "Microsoft", "AWS"]
    extra = json.loads(table[0]["x_extra"])
    assert (extra["ServiceProviderName"], extra["SkuMeter"], extra["HostProviderName"]) == ("AWS", "Compute", "AWS")
