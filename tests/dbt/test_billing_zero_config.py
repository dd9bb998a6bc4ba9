"""A bare FOCUS export is enough to start; nothing absurd reaches a published sum.

Two refreshes of ONE hand-written FOCUS file (USD, billing period 2025-04, account ACCT-ZC):

 line  BilledCost = EffectiveCost   what                          Tags                    team
  2        44.664   g6e.xlarge 24 h at 1.861 = list            {"team": "research"}       research
  3       133.992   g6e.xlarge 24 h at 5.583 = 3 x list        {"Team": "Research"}       research
  4        30.00    m7i.xlarge 24 h                            {" team ": " Platform "}   platform
  5        20.00    m7i.xlarge 24 h                            {"Cost-Center": "platform"} platform
  6        10.00    m7i.xlarge 24 h                            {"owner": "alice"}         (unallocated): owner is no default key
  7         5.00    m7i.xlarge 24 h                            none                       (unallocated)
  8  1e15           g6e.xlarge 1 h: implausible_amount         quarantined, in no sum
  9      3000.00    g6e.xlarge 2 h = 1500/h: implausible_unit_price  quarantined
 10         7.00    m7i.xlarge 24 h                            {"team": "reserch"} (a typo)  run A: team reserch;
                                                                                     run B: (unallocated), listed

By hand: research 44.664 + 133.992 = 178.656; platform 30 + 20 = 50; (unallocated) 10 + 5 = 15,
plus the typo's 7.00 (run A: its own unregistered team reserch; run B: (unallocated), 15 + 7 = 22,
and listed in fct_unmatched_team_tags); published total 243.656 + 7 = 250.656 (ServiceCategory
Compute everywhere: no shared pool; no tax, no credit).

Run A: only billing/ plus the bundled AWS on-demand price history (g6e.xlarge us-east-1 lists
1.861 USD/h from 2024-08-16, 1 GPU): no registry at all, so tag values are the teams.
Run B: the same file and a registry listing teams research and platform with NO policies block and
no prices: the built-in tag keys still allocate, to registered teams; no list price.
"""

from __future__ import annotations

import json
import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from tests import prefetch
from tests.conftest import SAMPLES

CENT = Decimal("0.01")
HEADER = ("BilledCost,EffectiveCost,BillingAccountId,BillingCurrency,BillingPeriodStart,BillingPeriodEnd,"
          "ChargeCategory,ChargeDescription,ChargeFrequency,ChargePeriodStart,ChargePeriodEnd,ConsumedQuantity,"
          "ConsumedUnit,PricingQuantity,PricingUnit,PricingCategory,ProviderName,InvoiceIssuerName,RegionId,"
          "ResourceId,ResourceType,ServiceCategory,ServiceName,Tags")


def _line(cost: str, instance: str, hours: str, tags: dict | None, rid: str) -> str:
    tag_text = '"' + json.dumps(tags).replace('"', '""') + '"' if tags is not None else ""
    return (f"{cost},{cost},ACCT-ZC,USD,2025-04-01 00:00:00,2025-05-01 00:00:00,Usage,{instance} on demand,"
            f"Usage-Based,2025-04-10 00:00:00,2025-04-11 00:00:00,{hours},Hours,{hours},Hours,Standard,AWS,AWS,"
            f"us-east-1,{rid},{instance},Compute,Amazon Elastic Compute Cloud,{tag_text}")


FOCUS = "\n".join([
    HEADER,
    _line("44.664", "g6e.xlarge", "24", {"team": "research"}, "i-1"),
    _line("133.992", "g6e.xlarge", "24", {"Team": "Research"}, "i-2"),
    _line("30.00", "m7i.xlarge", "24", {" team ": " Platform "}, "i-3"),
    _line("20.00", "m7i.xlarge", "24", {"Cost-Center": "platform"}, "i-4"),
    _line("10.00", "m7i.xlarge", "24", {"owner": "alice"}, "i-5"),
    _line("5.00", "m7i.xlarge", "24", None, "i-6"),
    _line("1000000000000000.00", "g6e.xlarge", "1", {"team": "research"}, "i-7"),
    _line("3000.00", "g6e.xlarge", "2", {"team": "platform"}, "i-8"),
    _line("7.00", "m7i.xlarge", "24", {"team": "reserch"}, "i-9"),
]) + "\n"
NAME = "focus_tag_only.csv"
TEAMS = "teams:\n  - id: research\n    name: Research\n  - id: platform\n    name: Platform\n"


def _refresh(root: Path, *, registry: bool, prices: bool) -> dict:
    from pipelines.cli import execute_refresh

    inputs = root / "inputs"
    (inputs / "billing").mkdir(parents=True)
    (inputs / "billing" / NAME).write_text(FOCUS)
    if registry:
        (inputs / "registry").mkdir()
        (inputs / "registry" / "teams.yaml").write_text(TEAMS)
    if prices:
        (inputs / "prices").mkdir()
        shutil.copy(SAMPLES / "prices" / "karpenter_aws_ondemand_gpu_prices_history.csv", inputs / "prices")
    home = root / "home"
    ok, _run_id, reason = execute_refresh(home, inputs, docs=False)
    return {"home": home, "ok": ok, "reason": reason}


def build_bare(root: Path) -> dict:
    """No registry, prices only (a tests/prefetch.py job)."""
    return _refresh(root, registry=False, prices=True)


def build_teams_only(root: Path) -> dict:
    """teams.yaml only, no prices (a tests/prefetch.py job)."""
    return _refresh(root, registry=True, prices=False)


def _serving(run: dict):
    assert run["ok"], run["reason"]
    con = duckdb.connect(str(run["home"] / "serving.duckdb"), read_only=True)
    yield con
    con.close()


@pytest.fixture(scope="module")
def zero_config_bare_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("zero_config_bare", tmp_path_factory)


@pytest.fixture(scope="module")
def zero_config_teams_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("zero_config_teams", tmp_path_factory)


@pytest.fixture(scope="module", autouse=True)
def _both_runs(zero_config_bare_run: dict, zero_config_teams_run: dict) -> None:
    """Named by every test here (most pick their run with getfixturevalue), so both jobs are queued early."""


@pytest.fixture(scope="module")
def bare(zero_config_bare_run: dict):
    yield from _serving(zero_config_bare_run)


@pytest.fixture(scope="module")
def teams_only(zero_config_teams_run: dict):
    yield from _serving(zero_config_teams_run)


def _by_team(con) -> dict[str, tuple[Decimal, Decimal]]:
    rows = con.execute("select team_id, sum(billed_cost), sum(amortised_cost) from fct_chargeback_monthly "
                       "where currency = 'USD' and billing_period_start = '2025-04-01' group by all").fetchall()
    return {t: (Decimal(b).quantize(CENT), Decimal(a).quantize(CENT)) for t, b, a in rows}


HAND = {
    "bare": {"research": Decimal("178.66"), "platform": Decimal("50.00"), "reserch": Decimal("7.00"),
             "(unallocated)": Decimal("15.00")},
    "teams_only": {"research": Decimal("178.66"), "platform": Decimal("50.00"), "(unallocated)": Decimal("22.00")},
}


@pytest.mark.parametrize("run", ["bare", "teams_only"])
def test_chargeback_per_team_by_hand(run: str, request: pytest.FixtureRequest) -> None:
    con = request.getfixturevalue(run)
    assert _by_team(con) == {t: (v, v) for t, v in HAND[run].items()}
    # the absurd and the over-priced lines reach no published sum
    total = con.execute("select sum(BilledCost) from ledger_focus").fetchone()[0]
    assert total == Decimal("250.656")


@pytest.mark.parametrize(("run", "teams"), [
    ("bare", {"research": False, "platform": False, "reserch": False}),  # tag values are the teams
    ("teams_only", {"research": True, "platform": True}),
])
def test_dim_team_says_which_teams_are_registered(run: str, teams: dict, request: pytest.FixtureRequest) -> None:
    con = request.getfixturevalue(run)
    assert dict(con.execute("select team_id, registered from dim_team").fetchall()) == teams


@pytest.mark.parametrize(("run", "listed"), [
    ("bare", []),  # no registry: nothing to mismatch
    # line 10's 7.00 under key team, value reserch: charged to (unallocated) by no rule
    ("teams_only", [("team", "reserch", "USD", "(unallocated)", "none", 1, Decimal("7.00"), Decimal("7.00"))]),
])
def test_tag_values_naming_no_registered_team_are_listed_with_their_cost(
        run: str, listed: list, request: pytest.FixtureRequest) -> None:
    con = request.getfixturevalue(run)
    rows = con.execute("select tag_key, tag_value, currency, charged_to, charged_by, lines, billed_cost, effective_cost "
                       "from fct_unmatched_team_tags").fetchall()
    assert rows == listed


@pytest.mark.parametrize(("run", "basis"), [("bare", "tag (unregistered)"), ("teams_only", "tag")])
def test_tag_keys_are_case_and_space_insensitive(run: str, basis: str, request: pytest.FixtureRequest) -> None:
    con = request.getfixturevalue(run)
    got = dict(con.execute("select x_source_line, x_team || ' / ' || x_allocation_basis from ledger_focus").fetchall())
    typo = "reserch / tag (unregistered)" if run == "bare" else "(unallocated) / none"
    assert got == {2: f"research / {basis}", 3: f"research / {basis}", 4: f"platform / {basis}",
                   5: f"platform / {basis}", 6: "(unallocated) / none", 7: "(unallocated) / none", 10: typo}


@pytest.mark.parametrize("run", ["bare", "teams_only"])
def test_implausible_lines_are_named_in_dq_rejects(run: str, request: pytest.FixtureRequest) -> None:
    con = request.getfixturevalue(run)
    rows = con.execute("select line, rule, column_name, value from dq_rejects where file_name = ? order by line",
                       [NAME]).fetchall()
    assert rows == [(8, "implausible_amount", "BilledCost", "1000000000000000.0"),
                    (9, "implausible_unit_price", "BilledCost", "1500.0")]


def test_bill_vs_list_flags_three_times_list_and_passes_list(bare) -> None:
    rows = bare.execute(
        "select source_line, gpu_hours, effective_per_gpu_hour, list_per_gpu_hour, ratio, flag "
        "from fct_bill_vs_list_price order by source_line").fetchall()
    assert rows == [
        (2, Decimal(24), Decimal("1.861"), Decimal("1.861"), Decimal("1.000000"), "ok"),  # 44.664 / 24
        (3, Decimal(24), Decimal("5.583"), Decimal("1.861"), Decimal("3.000000"), "overbilled"),  # 133.992 / 24
    ], rows


def test_bill_vs_list_without_price_history_says_so(teams_only) -> None:
    flags = teams_only.execute("select source_line, flag, list_per_gpu_hour from fct_bill_vs_list_price "
                               "order by source_line").fetchall()
    assert flags == [(2, "no_list_price", None), (3, "no_list_price", None)]


def test_monthly_bill_rate_check_by_hand(bare) -> None:
    # g6e.xlarge, us-east-1, Standard, 2025-04, USD: lines 2 and 3, 24 GPU-h each (1 GPU x 24 h):
    # effective 44.664 + 133.992 = 178.656 over 48 GPU-h = 3.722 per GPU-h; list 1.861 on both;
    # ratio 178.656 / (1.861 x 48 = 89.328) = 2.0 > 1 + 0.10 -> overbilled
    rows = bare.execute(
        "select instance_type, lines, gpu_hours, effective_cost, effective_per_gpu_hour, list_per_gpu_hour, ratio, flag "
        "from fct_bill_rate_check").fetchall()
    assert rows == [("g6e.xlarge", 2, Decimal(48), Decimal("178.656"), Decimal("3.722"), Decimal("1.861"),
                     Decimal("2.000000"), "overbilled")]
