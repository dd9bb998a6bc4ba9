"""Commitment utilisation, savings and billing data-quality checks on the FOCUS spec examples.

One refresh (module fixture) on registry + the 11 FOCUS spec example files + the FOCUS 1.0 sample,
the sample landed twice under two names (identical bytes). A second fixture copies that home and
runs again with a re-delivered sample (one BilledCost changed) to show replacement, not addition.

Figures by hand from tests/data/public/focus/focus_spec_examples/ (all period 2023-01, no
BillingCurrency column -> this test's registry policy default_currency_by_account {default: EUR} gives
them EUR (the multicloud sample is all USD), no BillingAccountId -> each file is its own commitment scope):
- zero_percent_utilization_without_commitment_discount_flexibility: the one Unused line has
  EffectiveCost 1.50, no Used line -> used 0, unused 1.50, utilisation 0 %; the recurring
  purchase bills 1.50 with EffectiveCost 0.00 -> amortised 1.50.
- one_hundred_percent_utilization_without_commitment_discount_flexibility: Used EffectiveCost 1.50 -> 100 %.
- ..._with_commitment_discount_flexibility_with_1_resource: Used 0.50 -> 100 %;
  ..._with_2_resources: Used 1.00 + 1.00 = 2.00 -> 100 %.
- commitment_discount_usage_scenario_3: Used 0.75, Unused 0.25 -> 75 %; scenario_2: Unused 1.00 -> 0 %.
- commitment_discount_purchase_scenario_1: one-time purchase BilledCost 8760.00, EffectiveCost 0.00,
  no usage -> utilisation null, amortised 8760.00.
- commitment_discount_purchase_scenario_2: line 4 has ChargePeriodEnd 2023-02-01T30:00:00Z (hour 30)
  -> rejected; lines 2-3 load (BilledCost 1.00 + 1.00).
Savings of the spec lines (one 'EUR' row; Usage lines only; missing ContractedCost -> EffectiveCost,
missing ListCost -> ContractedCost; Unused lines count List = Contracted = 0):
  negotiated: flex1 committed 3.00 - 0.50 = 2.50, flex2 2 x (2.00 - 1.00) = 2.00, no-flex 3.00 - 1.50
  = 1.50 -> 6.00; commitment: Unused lines -1.50 (zero %) -1.00 (usage_2) -0.25 (usage_3) = -2.75;
  total 3.25; list for savings 5.25 + 4.00 + 3.00 + 2.00 + 1.00 + 0 + 0.75 + 1.50 = 17.50;
  rate 3.25 / 17.50 = 0.185714...; ListCost summed over all lines 6.25 + 8.00 + 6.00 + 8.00 = 28.25.
"""

from __future__ import annotations

import csv
import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from tests import prefetch

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples" / "inputs"
SPEC = REPO / "tests" / "data" / "public" / "focus" / "focus_spec_examples"
SAMPLE = SAMPLES / "billing" / "focus_1.0_sample_1000_multicloud.csv"
SAMPLE_TOTAL = Decimal("20.520226728990")  # docs/sources/billing.md
CHANGE = Decimal("1.25")


def _inputs(root: Path) -> Path:
    inputs = root / "inputs"
    shutil.copytree(SAMPLES / "registry", inputs / "registry")
    # The spec examples name no currency: without this they are held out of the ledger.
    (inputs / "registry" / "currency_policy.yaml").write_text('policies:\n  default_currency_by_account: {default: EUR}\n')
    billing = inputs / "billing"
    billing.mkdir(parents=True)
    for f in sorted(SPEC.glob("*.csv")):
        shutil.copy(f, billing / f.name)
    shutil.copy(SAMPLE, billing / SAMPLE.name)
    shutil.copy(SAMPLE, billing / "focus_sample_delivered_again.csv")  # same bytes, another name
    return inputs


def _first_run(root: Path) -> dict:
    from pipelines.cli import execute_refresh

    inputs = _inputs(root)
    home = root / "home"
    ok, _run_id, reason = execute_refresh(home, inputs, docs=False)
    return {"ok": ok, "reason": reason, "home": home, "inputs": inputs, "root": root}


def _redelivery(run: dict) -> dict:
    """A second run on a copy of the first home with the sample re-delivered, one BilledCost changed."""
    from pipelines.cli import execute_refresh

    root = run["root"]
    home = root / "home_redelivery"
    shutil.copytree(run["home"], home)
    with open(SAMPLE, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    col = rows[0].index("BilledCost")
    period_col = rows[0].index("BillingPeriodStart")
    old = Decimal(rows[1][col])
    rows[1][col] = str(old + CHANGE)
    changed = run["inputs"] / "billing" / "focus_sample_corrected.csv"
    with open(changed, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    try:
        ok, _run_id, reason = execute_refresh(home, run["inputs"], docs=False)
    finally:
        changed.unlink()
    return {"ok": ok, "reason": reason, "home": home, "period": rows[1][period_col]}


def build_runs(root: Path) -> dict:
    """Both refreshes of this module, in order (a tests/prefetch.py job): the first run, then the
    re-delivery on a copy of its home."""
    first = _first_run(root)
    return {"run": first, "redelivery": _redelivery(first)}


@pytest.fixture(scope="module")
def commitment_runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("billing_commitments", tmp_path_factory)


@pytest.fixture(scope="module")
def run(commitment_runs):
    """One refresh on registry + the 11 spec examples + the sample landed twice."""
    result = commitment_runs["run"]
    con = duckdb.connect(str(result["home"] / "ledger.duckdb"), read_only=True)
    yield {**result, "con": con}
    con.close()


@pytest.fixture(scope="module")
def redelivery(commitment_runs):
    """A second run on a copy of the first home with the sample re-delivered, one BilledCost changed."""
    result = commitment_runs["redelivery"]
    con = duckdb.connect(str(result["home"] / "ledger.duckdb"), read_only=True)
    yield {"ok": result["ok"], "reason": result["reason"], "con": con, "period": result["period"]}
    con.close()


def _commitment(con, file_name: str) -> dict:
    cur = con.execute(
        "select * from marts.fct_commitment_utilisation where x_source_file = ?", [file_name])
    names = [d[0] for d in cur.description]
    rows = cur.fetchall()
    assert len(rows) == 1, (file_name, rows)
    return dict(zip(names, rows[0]))


def _failed_checks(con, run_ok: bool) -> list[tuple[str, str]]:
    """Checks that failed in the latest run of this home (none when the run published)."""
    if run_ok:
        return []
    return con.execute(
        "select check_name, detail from audit.check_results "
        "where not passed and run_id = (select run_id from audit.check_results order by checked_at desc limit 1)"
    ).fetchall()


def _assert_published(result: dict) -> None:
    failed = _failed_checks(result["con"], result["ok"])
    assert result["ok"], (result["reason"], failed)


def test_refresh_publishes(run):
    _assert_published(run)


def test_zero_percent_utilisation(run):
    row = _commitment(run["con"], "zero_percent_utilization_without_commitment_discount_flexibility.csv")
    assert row["x_utilisation_pct"] == 0
    assert row["x_used_cost"] == 0
    assert row["x_unused_cost"] == Decimal("1.50")  # the Unused line's EffectiveCost
    assert row["x_unused_quantity"] == Decimal("1.00")
    assert row["x_purchase_billed_cost"] == Decimal("1.50")
    assert row["x_purchase_effective_cost"] == 0
    assert row["x_purchase_amortised_cost"] == Decimal("1.50")
    assert row["x_account_scope"].startswith("file:")
    assert row["BillingCurrency"] == "EUR"  # from the registry policy, the file names none


@pytest.mark.parametrize(
    ("file_name", "used"),
    [
        ("one_hundred_percent_utilization_without_commitment_discount_flexibility.csv", Decimal("1.50")),
        ("one_hundred_percent_utilization_with_commitment_discount_flexibility_with_1_resource.csv", Decimal("0.50")),
        ("one_hundred_percent_utilization_with_commitment_discount_flexibility_with_2_resources.csv", Decimal("2.00")),
        ("commitment_discount_usage_scenario_1.csv", Decimal("1.00")),
    ],
)
def test_hundred_percent_utilisation(run, file_name, used):
    row = _commitment(run["con"], file_name)
    assert row["x_utilisation_pct"] == 100
    assert row["x_used_cost"] == used
    assert row["x_unused_cost"] == 0


def test_partial_and_unused_only_scenarios(run):
    con = run["con"]
    row = _commitment(con, "commitment_discount_usage_scenario_3.csv")
    assert (row["x_used_cost"], row["x_unused_cost"]) == (Decimal("0.75"), Decimal("0.25"))
    assert row["x_utilisation_pct"] == 75
    row = _commitment(con, "commitment_discount_usage_scenario_2.csv")
    assert (row["x_used_cost"], row["x_unused_cost"], row["x_utilisation_pct"]) == (0, Decimal("1.00"), 0)


def test_prepaid_purchase_is_amortised(run):
    row = _commitment(run["con"], "commitment_discount_purchase_scenario_1.csv")
    assert row["x_purchase_billed_cost"] == Decimal("8760.00")
    assert row["x_purchase_effective_cost"] == 0
    assert row["x_purchase_amortised_cost"] == Decimal("8760.00")
    assert row["x_utilisation_pct"] is None  # no Used/Unused line in the file


def test_invalid_hour_row_rejected_rest_loads(run):
    con = run["con"]
    rejects = con.execute(
        "select line, rule, column_name from audit.dq_rejects "
        "where file_name = 'commitment_discount_purchase_scenario_2.csv' order by line nulls first").fetchall()
    # The spec examples have no BillingCurrency column: one file-level entry (line NULL, drops no row)
    # names the file (docs/sources/billing.md), then the quarantined row.
    assert rejects == [(None, "missing_currency_column", "BillingCurrency"), (4, "invalid_timestamp", "ChargePeriodEnd")]
    lines, billed = con.execute(
        "select count(*), sum(BilledCost) from marts.ledger_focus "
        "where x_source_file = 'commitment_discount_purchase_scenario_2.csv'").fetchone()
    assert (lines, billed) == (2, Decimal("2.00"))
    row = _commitment(con, "commitment_discount_purchase_scenario_2.csv")
    assert (row["x_purchase_lines"], row["x_purchase_billed_cost"]) == (2, Decimal("2.00"))


def test_spec_example_savings_by_hand(run):
    row = run["con"].execute(
        "select ListCost, x_NegotiatedDiscountSavings, x_CommitmentDiscountSavings, x_TotalSavings, "
        "x_ListCostForSavings, x_EffectiveSavingsRate, x_charge_lines "
        "from marts.fct_billing_savings where BillingCurrency = 'EUR'").fetchall()
    assert len(row) == 1
    listed, negotiated, commitment, total, list_for_savings, rate, lines = row[0]
    assert lines == 23
    assert listed == Decimal("28.25")
    assert (negotiated, commitment, total) == (Decimal("6.00"), Decimal("-2.75"), Decimal("3.25"))
    assert list_for_savings == Decimal("17.50")
    assert float(rate) == pytest.approx(3.25 / 17.5, abs=1e-9)


def test_sample_savings_reconcile_to_the_bill(run):
    con = run["con"]
    billed, negotiated, commitment, total = con.execute(
        "select sum(BilledCost), sum(x_NegotiatedDiscountSavings), sum(x_CommitmentDiscountSavings), "
        "sum(x_TotalSavings) from marts.fct_billing_savings where BillingCurrency = 'USD'").fetchone()
    assert billed == SAMPLE_TOTAL
    assert negotiated + commitment == total
    assert total > 0


def test_same_bytes_twice_land_once(run):
    con = run["con"]
    files = con.execute(
        "select count(*), sum(rows_loaded) from audit.file_loads where family = 'billing' and source_file in "
        "('focus_1.0_sample_1000_multicloud.csv', 'focus_sample_delivered_again.csv')").fetchone()
    assert files == (1, 1000)
    lines, billed = con.execute(
        "select count(*), sum(BilledCost) from marts.ledger_focus where BillingCurrency = 'USD'").fetchone()
    assert (lines, billed) == (1000, SAMPLE_TOTAL)


def test_coverage_reports_missing_mandatory_columns(run):
    con = run["con"]
    share = dict(con.execute(
        "select column_name, null_share from intermediate.int_billing_column_coverage "
        "where x_source_file = 'commitment_discount_usage_scenario_1.csv'").fetchall())
    assert share["BillingCurrency"] == 1.0 and share["ProviderName"] == 1.0
    assert share["BilledCost"] == 0.0
    sample = dict(con.execute(
        "select column_name, null_share from intermediate.int_billing_column_coverage "
        "where x_source_file = 'focus_1.0_sample_1000_multicloud.csv'").fetchall())
    assert sample["BillingCurrency"] == 0.0 and len(sample) == 21


def test_duplicate_rows_across_files_warns(run):
    # Same provider/account/start/resource/SKU price/cost/description in several spec files: the
    # zero % and 100 % (no flexibility) purchase line; the Used line of usage_1, _3 and _4; the
    # Unused line of usage_2 and _3; the committed VM_LARGE hour of three utilisation files.
    results = run["con"].execute(
        "select severity, detail from audit.check_results where check_name = 'focus_dq_duplicate_rows_across_files'"
    ).fetchall()
    assert results and all(severity == "warn" and detail == "Same charge delivered in two files: 4 charges"
                           for severity, detail in results)


def test_redelivery_run_publishes(redelivery):
    _assert_published(redelivery)


def test_redelivery_replaces_not_adds(run, redelivery):
    assert not [c for c in _failed_checks(redelivery["con"], redelivery["ok"]) if not c[0].startswith("gx_")]
    before, after = run["con"], redelivery["con"]
    sql = ("select billing_period_start, currency, sum(billed_cost) from marts.fct_chargeback_monthly "
           "group by all order by all")
    old = {(p, c): t for p, c, t in before.execute(sql).fetchall()}
    new = {(p, c): t for p, c, t in after.execute(sql).fetchall()}
    assert old.keys() == new.keys()
    changed_period = redelivery["period"][:10]
    for key in old:
        expected = old[key] + (CHANGE if (str(key[0]), key[1]) == (changed_period, "USD") else 0)
        assert new[key] == expected, key
    lines, billed = after.execute(
        "select count(*), sum(BilledCost) from marts.ledger_focus where BillingCurrency = 'USD'").fetchone()
    assert (lines, billed) == (1000, SAMPLE_TOTAL + CHANGE)
    raw_rows = after.execute(
        "select count(*) from raw.billing_charges where x_focus_version = '1.0'").fetchone()[0]
    assert raw_rows == 2000  # both deliveries stay in raw; only the newest is current
