"""FOCUS 1.3 export: split allocation rows, the partition of the ledger, conformance, CLI.

Hand-computed case: one refresh of tests/fixtures/export/shared_split_2025-04/ (registry: teams
inference, training, analytics; policies chargeback_basis amortised, idle_policy separate). The FOCUS
1.2 file, billing period 2025-04, USD account 111122223333:

                                                      BilledCost  EffectiveCost  team (tag)
 1 m7i on demand (i-inference02)                          600.00         600.00  inference
 2 m7i on demand (i-training01)                           400.00         400.00  training
 3 AWS CloudTrail and Config (Management and Governance) 1000.00        1000.00  (none) -> shared
   invoice                                               2000.00        2000.00

The ledger spreads shared cost by direct cost share (docs/cost_model.md, Chargeback), so line 3
splits over the period's directly charged teams: weights inference 600, training 400, pool total
600 + 400 = 1000; shares 600 / 1000 = 0.6 and 400 / 1000 = 0.4:
  inference: 1000 x 0.6 = 600.00   training: 1000 x 0.4 = 400.00   (600 + 400 = 1000: no remainder)
Lines 1 and 2 are not split: one row each, Allocated* null.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from pipelines.cli import app
from tests import prefetch
from warehouse.export import export_focus, export_totals

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "export" / "shared_split_2025-04"
CENT = Decimal("0.01")
runner = CliRunner()

# FOCUS columns the export must hold (mandatory in 1.0-1.3 and held by the ledger; 1.3 names).
MANDATORY = (
    "BilledCost", "EffectiveCost", "ListCost", "ContractedCost", "BillingAccountId", "BillingCurrency",
    "BillingPeriodStart", "BillingPeriodEnd", "ChargeCategory", "ChargeClass", "ChargeDescription",
    "ChargePeriodStart", "ChargePeriodEnd", "InvoiceIssuerName", "ServiceProviderName", "HostProviderName",
    "ServiceCategory", "ServiceName", "PricingQuantity", "PricingUnit",
    "AllocatedMethodId", "AllocatedMethodDetails", "AllocatedResourceId", "AllocatedResourceName", "AllocatedTags",
    "x_team", "x_workload_id", "x_gpu_model", "x_gpu_hours",
)
CHARGE_CATEGORIES = ("Usage", "Purchase", "Tax", "Credit", "Adjustment")
ALLOCATED = ("AllocatedMethodId", "AllocatedMethodDetails", "AllocatedResourceId", "AllocatedResourceName",
             "AllocatedTags")


def cents(value) -> Decimal:
    return Decimal(value).quantize(CENT)


def build_focus_export(root: Path) -> dict:
    """One refresh of the FOCUS export fixture into a fresh home (a tests/prefetch.py job)."""
    from pipelines.cli import execute_refresh

    shutil.copytree(FIXTURE, root / "inputs")
    ok, _run_id, reason = execute_refresh(root / "home", root / "inputs", docs=False)
    return {"home": root / "home", "ok": ok, "reason": reason}


@pytest.fixture(scope="module")
def focus_export_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("focus_export", tmp_path_factory)


@pytest.fixture(scope="module")
def home(focus_export_run: dict) -> Path:
    assert focus_export_run["ok"], focus_export_run["reason"]
    return focus_export_run["home"]


def rows(path: Path, sql: str, params: list | None = None) -> list[dict]:
    con = duckdb.connect(str(path), read_only=True) if path.suffix == ".duckdb" else duckdb.connect()
    try:
        cur = con.execute(sql, params or [])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]
    finally:
        con.close()


def conformance_problems(con: duckdb.DuckDBPyConnection, relation: str, late_charges: bool = False) -> list[str]:
    """The FOCUS rules on the columns we emit, as (rule, offending rows) problems. `late_charges`: a charge of
    an earlier period may be billed on a later invoice (the public Azure sample bills 2024-09-30 22:00 usage
    in October); none may start after its billing period ends."""
    columns = {r[0] for r in con.execute(f"describe select * from {relation}").fetchall()}
    problems = [f"missing column {c}" for c in MANDATORY if c not in columns]
    checks = {
        "null BilledCost/EffectiveCost/BillingCurrency":
            "BilledCost is null or EffectiveCost is null or BillingCurrency is null",
        "ChargePeriod outside BillingPeriod (a correction may carry an earlier ChargePeriod)":
            "cast(ChargePeriodStart as timestamp) >= cast(BillingPeriodEnd as timestamp) or "
            + ("false" if late_charges else
               "coalesce(ChargeClass, '') <> 'Correction' and (cast(ChargePeriodStart as timestamp) < "
               "cast(BillingPeriodStart as timestamp) or cast(ChargePeriodEnd as timestamp) > "
               "cast(BillingPeriodEnd as timestamp))"),
        "ChargePeriodStart after ChargePeriodEnd": "cast(ChargePeriodStart as timestamp) > cast(ChargePeriodEnd as timestamp)",
        "ChargeCategory not allowed": f"ChargeCategory not in {CHARGE_CATEGORIES!r}",
        "Credit with a positive BilledCost": "ChargeCategory = 'Credit' and BilledCost > 0",
        "Purchase/Tax with a negative BilledCost outside a correction":
            "ChargeCategory in ('Purchase', 'Tax') and BilledCost < 0 and coalesce(ChargeClass, '') <> 'Correction'",
        "Allocated* half filled": "(AllocatedMethodId is null) <> (AllocatedMethodDetails is null) or "
                                  "(AllocatedMethodId is null) <> (AllocatedTags is null) or "
                                  "(AllocatedMethodId is null) <> (AllocatedResourceId is null)",
    }
    if problems:
        return problems
    for rule, where in checks.items():
        n = con.execute(f"select count(*) from {relation} where {where}").fetchone()[0]
        if n:
            problems.append(f"{rule}: {n} rows")
    for (details, tags) in con.execute(
            f"select AllocatedMethodDetails, AllocatedTags from {relation} where AllocatedMethodId is not null").fetchall():
        assert {"weight", "pool_total", "share"} <= json.loads(details).keys()
        assert "x_team" in json.loads(tags)
    return problems


def test_shared_line_split_600_400_by_hand(home: Path) -> None:
    split = rows(home / "serving.duckdb",
                 "select * from fct_focus_export where ServiceName = 'AWS CloudTrail' order by x_team")
    # 1000 x 600/1000 = 600.00 to inference, 1000 x 400/1000 = 400.00 to training, on both cost columns
    assert [(r["x_team"], cents(r["BilledCost"]), cents(r["EffectiveCost"])) for r in split] == [
        ("inference", Decimal("600.00"), Decimal("600.00")), ("training", Decimal("400.00"), Decimal("400.00"))]
    assert len({r["x_charge_key"] for r in split}) == 1  # both rows are parts of the one ledger line
    for r, weight, share in zip(split, ("600", "400"), ("0.6", "0.4")):
        assert r["AllocatedMethodId"] == "proportional-direct-cost"
        details = json.loads(r["AllocatedMethodDetails"])
        assert (Decimal(str(details["weight"])), Decimal(str(details["pool_total"])), Decimal(str(details["share"]))) == (
            Decimal(weight), Decimal("1000"), Decimal(share))
        assert details["basis"] == "amortised"
        assert (r["AllocatedResourceId"], r["AllocatedResourceName"]) == (f"team/{r['x_team']}", r["x_team"])
        assert json.loads(r["AllocatedTags"]) == {"x_team": r["x_team"]}
        assert r["x_ledger_team"] == "(unallocated)"
        assert (r["ServiceProviderName"], r["HostProviderName"]) == ("AWS", "AWS")


def test_direct_lines_are_not_split(home: Path) -> None:
    direct = rows(home / "serving.duckdb",
                  "select * from fct_focus_export where ServiceName <> 'AWS CloudTrail' order by x_team")
    assert [(r["x_team"], cents(r["BilledCost"])) for r in direct] == [
        ("inference", Decimal("600.00")), ("training", Decimal("400.00"))]
    assert all(r[c] is None for r in direct for c in ALLOCATED)


def test_totals_equal_ledger_and_chargeback(home: Path) -> None:
    serving = home / "serving.duckdb"
    # 600 + 400 + 600 + 400 = 2000 = the invoice, on both bases
    assert [(str(p), c, n, cents(b), cents(e)) for p, c, n, b, e in export_totals(serving)] == [
        ("2025-04-01", "USD", 4, Decimal("2000.00"), Decimal("2000.00"))]
    by_team = {r["x_team"]: cents(r["cost"]) for r in rows(
        serving, "select x_team, sum(EffectiveCost) as cost from fct_focus_export group by all")}
    chargeback = {r["team_id"]: cents(r["amortised_cost"]) for r in rows(
        serving, "select team_id, amortised_cost from fct_chargeback_monthly where amortised_cost <> 0")}
    assert by_team == chargeback == {"inference": Decimal("1200.00"), "training": Decimal("800.00")}


def test_cli_writes_parquet_and_csv_that_conform(home: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["export", "focus", "--home", str(home), "--out", str(tmp_path / "pq")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "pq" / "focus_2025-04.parquet").is_file()
    result = runner.invoke(app, ["export", "focus", "--home", str(home), "--out", str(tmp_path / "csv"),
                                 "--format", "csv", "--month", "2025-04"])
    assert result.exit_code == 0, result.output
    con = duckdb.connect()
    try:
        parquet = f"read_parquet('{tmp_path / 'pq'}/*.parquet')"
        assert conformance_problems(con, parquet) == []
        assert con.execute(f"select sum(BilledCost) from {parquet}").fetchone()[0] == Decimal("2000")
        csv = f"read_csv_auto('{tmp_path / 'csv' / 'focus_2025-04.csv'}')"
        assert con.execute(f"select count(*), sum(BilledCost) from {csv}").fetchone() == (4, 2000)
    finally:
        con.close()
    # a month with nothing published writes no file
    assert export_focus(home / "serving.duckdb", tmp_path / "none", month="2024-01") == []


def test_csv_writes_focus_date_times(home: Path, tmp_path: Path) -> None:
    """FOCUS date/times are ISO 8601 UTC with Z (`2025-04-01T00:00:00Z`), as the inputs are; DuckDB's CSV
    default `2025-04-01 00:00:00` is none, and a reader would take it for local time."""
    [path] = export_focus(home / "serving.duckdb", tmp_path, fmt="csv", month="2025-04")
    with path.open(newline="") as fh:
        records = list(csv.DictReader(fh))
    assert len(records) == 4
    for r in records:
        # the fixture's billing period is April 2025, UTC
        assert (r["BillingPeriodStart"], r["BillingPeriodEnd"]) == ("2025-04-01T00:00:00Z", "2025-05-01T00:00:00Z")
        for c in ("ChargePeriodStart", "ChargePeriodEnd"):
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", r[c]), (c, r[c])


def test_export_columns_of_focus_13_default_to_provider_name(home: Path) -> None:
    """A FOCUS 1.2 source has no ServiceProviderName, HostProviderName or 1.3 columns: ProviderName fills
    the two names and the 1.3 columns are null (tests/sources/test_billing_focus13.py has a 1.3 source)."""
    got = rows(home / "serving.duckdb", "select distinct ServiceProviderName, HostProviderName, ContractApplied, "
                                       "SkuMeter, PricingCurrencyEffectiveCost from fct_focus_export")
    assert got == [{"ServiceProviderName": "AWS", "HostProviderName": "AWS", "ContractApplied": None,
                    "SkuMeter": None, "PricingCurrencyEffectiveCost": None}]


@pytest.mark.parametrize("args", [["--format", "xlsx"], ["--month", "2025-4"]])
def test_cli_rejects_bad_arguments(home: Path, tmp_path: Path, args: list[str]) -> None:
    result = runner.invoke(app, ["export", "focus", "--home", str(home), "--out", str(tmp_path), *args])
    assert result.exit_code == 2, result.output


def test_cli_needs_a_publication(tmp_path: Path) -> None:
    result = runner.invoke(app, ["export", "focus", "--home", str(tmp_path / "empty"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1, result.output


def test_asset_writes_only_when_enabled(home: Path) -> None:
    import dagster as dg

    from pipelines.defs.publish.export import FocusExportConfig, focus_export
    from pipelines.resources import LedgerResource

    ledger = LedgerResource(home=str(home))
    off = focus_export(dg.build_asset_context(), ledger=ledger, config=FocusExportConfig())
    assert off.metadata["files"] == 0 and not (home / "exports" / "focus").exists()
    on = focus_export(dg.build_asset_context(), ledger=ledger, config=FocusExportConfig(enabled=True))
    assert on.metadata["files"] == 1 and (home / "exports" / "focus" / "focus_2025-04.parquet").is_file()


@pytest.mark.e2e
def test_sample_export_equals_ledger_and_conforms(sample_run: dict, tmp_path: Path) -> None:
    assert sample_run["ok"], sample_run["reason"]
    serving = sample_run["home"] / "serving.duckdb"
    ledger = rows(serving, "select cast(BillingPeriodStart as date) as p, BillingCurrency as c, "
                           "sum(BilledCost) as b, sum(EffectiveCost) as e from ledger_focus group by all order by all")
    export = export_totals(serving)
    assert [(r["p"], r["c"], cents(r["b"]), cents(r["e"] or 0)) for r in ledger] == [
        (p, c, cents(b), cents(e or 0)) for p, c, _n, b, e in export]
    written = export_focus(serving, tmp_path)
    con = duckdb.connect()
    try:
        files = f"read_parquet('{tmp_path}/*.parquet')"
        assert con.execute(f"select count(*) from {files}").fetchone()[0] == sum(n for _p, _c, n, _b, _e in export)
        assert conformance_problems(con, files, late_charges=True) == []
        # the one late charge of the samples, billed on the next invoice
        assert con.execute(f"select count(*) from {files} where ChargePeriodStart < BillingPeriodStart").fetchone()[0] == 1
    finally:
        con.close()
    assert len(written) == len({p for p, *_ in export})


# The sample's bills; the other files of samples/inputs/billing (invoice totals, provenance) are no bills
# and stay in the round trip's inputs folder, so its refresh reconciles against the same invoices.
SAMPLE_BILLS = ("azure_ea_cost_export_sample_anonymized.csv", "focus_1.0_sample_1000_multicloud.csv",
                "focus_1.2_fleet_2025-04_constructed.csv", "oci_cost_report_sample.csv")
ROUND_TRIP = ("select cast(BillingPeriodStart as date) as p, BillingCurrency as c, x_team as t, "
              "sum(BilledCost) as b, sum(coalesce(EffectiveCost, 0)) as e, count(*) as n from ledger_focus "
              "group by all order by all")


def round_trip(fmt: str, sample_home: Path, root: Path) -> dict:
    """The sample ledger exported without splits (one row per ledger line), loaded back as the bills of an
    otherwise unchanged sample inputs folder through a full refresh."""
    from pipelines.cli import execute_refresh
    from tests.conftest import SAMPLES

    inputs = root / "inputs"
    shutil.copytree(SAMPLES, inputs)
    for name in SAMPLE_BILLS:
        (inputs / "billing" / name).unlink()
    written = export_focus(sample_home / "serving.duckdb", inputs / "billing", fmt=fmt, splits=False)
    ok, _run_id, reason = execute_refresh(root / "home", inputs, docs=False)
    return {"home": root / "home", "ok": ok, "reason": reason, "files": written}


def build_round_trip_parquet(root: Path, sample_run: dict) -> dict:
    """`round_trip` in Parquet (a tests/prefetch.py job, after the sample refresh)."""
    assert sample_run["ok"], sample_run["reason"]
    return round_trip("parquet", sample_run["home"], root)


@pytest.fixture(scope="module")
def export_round_trip(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The round trip in Parquet (the `build_round_trip_parquet` job)."""
    return prefetch.result("round_trip_parquet", tmp_path_factory)


@pytest.mark.e2e
def test_sample_export_round_trips_through_billing_parser(sample_run: dict, export_round_trip: dict) -> None:
    """Export -> inputs folder -> refresh: Σ BilledCost and Σ EffectiveCost per billing period, currency
    and team are the ledger's to the cent, and so is every team's chargeback."""
    assert sample_run["ok"], sample_run["reason"]
    serving = sample_run["home"] / "serving.duckdb"
    again = export_round_trip
    assert again["ok"], again["reason"]
    before = [(r["p"], r["c"], r["t"], cents(r["b"]), cents(r["e"]), r["n"]) for r in rows(serving, ROUND_TRIP)]
    after = [(r["p"], r["c"], r["t"], cents(r["b"]), cents(r["e"]), r["n"])
             for r in rows(again["home"] / "serving.duckdb", ROUND_TRIP)]
    assert after == before
    chargeback = ("select billing_period_start, currency, team_id, direct_cost, shared_cost, idle_cost, credits, tax, "
                  "total_cost, billed_cost, amortised_cost from fct_chargeback_monthly "
                  "order by all")
    assert rows(again["home"] / "serving.duckdb", chargeback) == rows(serving, chargeback)


def _parsed_charges(files: list[Path]) -> list[tuple]:
    """Every billing_charges row the FOCUS parser makes of `files`, as text, without its line number."""
    from sources.billing.focus import parse

    charges = []
    for path in files:
        parsed = parse(Path(path))
        assert not parsed.rejects, parsed.rejects[:3]
        assert set(parsed.tables) == {"billing_charges"}, sorted(parsed.tables)
        charges += [tuple(sorted((k, str(v)) for k, v in row.items() if k != "_source_line"))
                    for row in parsed.tables["billing_charges"].to_pylist()]
    return sorted(charges)


def test_csv_export_parses_to_the_rows_of_the_parquet_export(sample_run: dict, tmp_path: Path) -> None:
    """The CSV export of the sample ledger parses (the CSV parser's own one-pass read) to exactly the
    billing rows its Parquet export parses to. With the Parquet export's full round trip above equal to
    the ledger, the CSV's full round trip would be the same refresh of the same raw rows, so it is not
    run again."""
    assert sample_run["ok"], sample_run["reason"]
    serving = sample_run["home"] / "serving.duckdb"
    written = {fmt: export_focus(serving, tmp_path / fmt, fmt=fmt, splits=False) for fmt in ("csv", "parquet")}
    assert all(Path(p).suffix == ".csv" for p in written["csv"]), written["csv"]
    csv_rows, parquet_rows = _parsed_charges(written["csv"]), _parsed_charges(written["parquet"])
    # one row per ledger line: the export without splits
    assert len(csv_rows) == rows(serving, "select count(*) as n from ledger_focus")[0]["n"] > 1000
    assert csv_rows == parquet_rows


ALLOCATED_FIXTURE = REPO / "tests" / "sources" / "fixtures" / "focus_1.3_constructed" / "costandusage_allocated_constructed.csv"


def build_provider_home(root: Path) -> dict:
    """The hand-computed fixture plus a FOCUS 1.3 file whose 3 lines the provider already allocated
    (costandusage_allocated_constructed.csv, same account, period and currency):

                                                   BilledCost  AllocatedMethodId          AllocatedTags
     4 AWS Config (Management and Governance)          180.00  aws-split-cost-allocation  team inference
     5 AWS Config (Management and Governance)          120.00  aws-split-cost-allocation  team training
     6 m7i on demand (i-training02, tag team training)  50.00  aws-split-cost-allocation  project atlas

    One refresh into a fresh home (a tests/prefetch.py job).
    """
    from pipelines.cli import execute_refresh

    shutil.copytree(FIXTURE, root / "inputs")
    shutil.copy(ALLOCATED_FIXTURE, root / "inputs" / "billing" / ALLOCATED_FIXTURE.name)
    ok, _run_id, reason = execute_refresh(root / "home", root / "inputs", docs=False)
    return {"home": root / "home", "ok": ok, "reason": reason}


@pytest.fixture(scope="module")
def provider_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The home `build_provider_home` refreshed."""
    run = prefetch.result("provider_allocation", tmp_path_factory)
    assert run["ok"], run["reason"]
    return run["home"]


def test_provider_allocation_written_through_unsplit(provider_home: Path, tmp_path: Path) -> None:
    """A line the provider allocated is one export row with its Allocated* columns exactly as received;
    our split applies only to the other lines (the CloudTrail line is still split, by us)."""
    with ALLOCATED_FIXTURE.open(newline="") as fh:
        sent = {(r["AllocatedResourceName"], cents(r["BilledCost"])): {c: r[c] for c in ALLOCATED}
                for r in csv.DictReader(fh)}
    got = rows(provider_home / "serving.duckdb",
               "select * from fct_focus_export where x_allocation_source = 'provider' order by BilledCost")
    assert len(got) == 3 == len({r["x_charge_key"] for r in got})
    for r in got:
        assert {c: r[c] for c in ALLOCATED} == sent[(r["AllocatedResourceName"], cents(r["BilledCost"]))]
        assert r["x_allocation_portion"] == "rest"
    ours = rows(provider_home / "serving.duckdb",
                "select distinct AllocatedMethodId, x_allocation_source from fct_focus_export "
                "where ServiceName = 'AWS CloudTrail'")
    assert ours == [{"AllocatedMethodId": "proportional-direct-cost", "x_allocation_source": "gpu-ledger"}]
    # 600 + 400 + 1000 + 180 + 120 + 50 = 2350 = the invoice, and the export partitions it
    assert [(str(p), cents(b)) for p, _c, _n, b, _e in export_totals(provider_home / "serving.duckdb")] == [
        ("2025-04-01", Decimal("2350.00"))]
    # the export without splits keeps the provider's allocation and drops only ours
    [path] = export_focus(provider_home / "serving.duckdb", tmp_path, splits=False)
    lines = rows(path, f"select * from read_parquet('{path}')")
    assert sorted((r["AllocatedMethodId"] or "") for r in lines) == ["", "", "", *["aws-split-cost-allocation"] * 3]
    assert sorted((r["x_allocation_source"] or "") for r in lines) == ["", "", "", "provider", "provider", "provider"]


def test_chargeback_uses_the_provider_allocation_first(provider_home: Path) -> None:
    """The provider's allocation goes before any rule of ours: lines 4 and 5 (untagged AWS Config, which
    our policy would pool as shared cost) are charged to the teams their AllocatedTags name, and the
    chargeback line says so. Line 6's AllocatedTags name only a project (no team or workload key): its
    resource tag (team training) places it; being provider-allocated it is never split or pooled.

    Direct cost (amortised = billed here):
      inference  600 (line 1, tag) + 180 (line 4, provider allocation)           =  780.00
      training   400 (line 2, tag) + 120 (line 5, provider allocation) + 50 (6)  =  570.00
    Shared pool: line 3, CloudTrail 1000.00, spread by direct cost share (780 + 570 = 1350):
      inference  1000 x 780 / 1350 = 577.777777778  training  1000 x 570 / 1350 = 422.222222222
    Team totals: inference 780 + 577.78 = 1357.78; training 570 + 422.22 = 992.22; 1357.78 + 992.22 = 2350.00.
    """
    serving = provider_home / "serving.duckdb"
    basis = {(cents(r["BilledCost"]), r["x_team"]): r["x_allocation_basis"]
             for r in rows(serving, "select BilledCost, x_team, x_allocation_basis from ledger_focus "
                                    "where ServiceName = 'AWS Config' or BilledCost = 50")}
    assert basis == {(Decimal("180.00"), "inference"): "provider allocation: aws-split-cost-allocation",
                     (Decimal("120.00"), "training"): "provider allocation: aws-split-cost-allocation",
                     (Decimal("50.00"), "training"): "tag"}
    lines = rows(provider_home / "ledger.duckdb",
                 "select team_id, line_kind, method, sum(amount) as amount from intermediate.int_chargeback_lines "
                 "where basis = 'amortised' group by all order by all")
    assert [(r["team_id"], r["line_kind"], r["method"], cents(r["amount"])) for r in lines] == [
        ("inference", "direct_cost", "provider allocation: aws-split-cost-allocation", Decimal("180.00")),
        ("inference", "direct_cost", "tag", Decimal("600.00")),
        ("inference", "shared_cost", "proportional-direct-cost", Decimal("577.78")),
        ("training", "direct_cost", "provider allocation: aws-split-cost-allocation", Decimal("120.00")),
        ("training", "direct_cost", "tag", Decimal("450.00")),
        ("training", "shared_cost", "proportional-direct-cost", Decimal("422.22")),
    ]
    chargeback = {r["team_id"]: cents(r["total_cost"])
                  for r in rows(serving, "select team_id, total_cost from fct_chargeback_monthly")}
    assert chargeback == {"inference": Decimal("1357.78"), "training": Decimal("992.22")}
    # the export's team column agrees with the chargeback, team by team
    export = {r["x_team"]: cents(r["cost"]) for r in rows(
        serving, "select x_team, sum(EffectiveCost) as cost from fct_focus_export group by all")}
    assert export == chargeback
    provider_rows = rows(serving, "select x_team, x_ledger_team from fct_focus_export "
                                  "where x_allocation_source = 'provider' order by BilledCost")
    assert [(r["x_team"], r["x_ledger_team"]) for r in provider_rows] == [
        ("training", "training"), ("training", "training"), ("inference", "inference")]


def test_csv_export_neutralises_formula_cells_but_keeps_numbers(tmp_path: Path) -> None:
    """OWASP CSV injection: a text cell starting with = + - @ tab or CR is written with a leading quote;
    a text cell that is just a number ('-3.50') and every DECIMAL cell (-3.50 BilledCost) stay as they are;
    Parquet is written untouched."""
    serving = tmp_path / "serving.duckdb"
    texts = ["=HYPERLINK(\"http://x\",\"y\")", "+cmd", "-rf", "@SUM(A1)", "\tx", "\rx", "-3.50", "plain"]
    con = duckdb.connect(str(serving))
    con.execute("create table fct_focus_export (BillingPeriodStart timestamp, BillingCurrency varchar, "
                "ChargePeriodStart timestamp, x_charge_key varchar, x_export_row_id varchar, "
                "BilledCost decimal(38, 12), ChargeDescription varchar)")
    for i, text in enumerate(texts):
        con.execute("insert into fct_focus_export values ('2025-04-01', 'USD', '2025-04-01', ?, ?, -3.50, ?)",
                    [f"k{i}", f"k{i}", text])
    con.close()
    [path] = export_focus(serving, tmp_path / "csv", fmt="csv")
    with path.open(newline="") as fh:
        got = list(csv.DictReader(fh))
    assert [r["ChargeDescription"] for r in got] == [
        "'=HYPERLINK(\"http://x\",\"y\")", "'+cmd", "'-rf", "'@SUM(A1)", "'\tx", "'\rx", "-3.50", "plain"]
    assert {r["BilledCost"] for r in got} == {"-3.500000000000"}
    [parquet] = export_focus(serving, tmp_path / "parquet")
    assert [r["ChargeDescription"] for r in rows(parquet, f"select * from read_parquet('{parquet}')")] == texts
