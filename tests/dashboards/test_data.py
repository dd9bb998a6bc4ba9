"""Data layer: numbers against the hand-written fixture, bound parameters, graceful gaps."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from reporting.formatting import fmt_money, fmt_unit_cost
from warehouse import serving

INJECTION = "x' or 1=1 --"


def test_spend_by_team_is_exact_and_per_currency(serving_db: Path) -> None:
    df = serving.spend_by(serving_db, "team")
    jan = df[(df["team"] == "ml-research") & (df["period"] == date(2025, 1, 1))]
    assert jan["cost"].tolist() == [Decimal("980.105")]
    assert isinstance(jan["cost"].iloc[0], Decimal)
    eur = df[df["currency"] == "EUR"]
    assert eur[["team", "cost"]].values.tolist() == [["search", Decimal("99.99")]]


def test_spend_filters_narrow_the_rows(serving_db: Path) -> None:
    df = serving.spend_by(serving_db, "provider", team="search", start=date(2025, 2, 1), end=date(2025, 2, 1))
    assert sorted(zip(df["provider"], df["currency"], df["cost"])) == [
        ("coreweave", "USD", Decimal("600.50")), ("ovh", "EUR", Decimal("99.99"))]
    by_type = serving.spend_by(serving_db, "workload_type", team="ml-research")
    assert by_type["cost"].tolist() == [Decimal(1200), Decimal(1300)]


@pytest.mark.parametrize("kwargs", [{"team": INJECTION}, {"provider": INJECTION}])
def test_injection_attempt_matches_nothing(serving_db: Path, kwargs: dict) -> None:
    assert serving.spend_by(serving_db, "team", **kwargs).empty
    assert serving.chargeback(serving_db, team=kwargs.get("team"), currency=kwargs.get("provider")).empty
    assert serving.unit_costs(serving_db, team=kwargs.get("team"), workload=kwargs.get("provider")).empty
    assert serving.prices(serving_db, provider=kwargs.get("provider") or INJECTION).empty
    assert serving.workload_table(serving_db, "fct_candidate_comparison", INJECTION).empty
    # The database is untouched and still answers normally.
    assert len(serving.chargeback(serving_db)) == 7


def test_chargeback_rows_and_month_filter(serving_db: Path) -> None:
    df = serving.chargeback(serving_db, month=date(2025, 1, 1), currency="USD")
    assert dict(zip(df["team_id"], df["total_cost"])) == {
        "(unallocated)": Decimal("33.333333333333"), "ml-research": Decimal("980.105"), "search": Decimal("500.25")}
    assert sum(df["total_cost"]) == Decimal("1513.688333333333")


def test_reconciliation_both_ways_includes_api_spend(serving_db: Path) -> None:
    recon = serving.reconciliation(serving_db).set_index(["period", "currency"])
    feb = recon.loc[(date(2025, 2, 1), "USD")]
    # Billed: invoice 1200.00 + 600.50 + 10.00 + 0 (covered) + 400.00 (plan fee) + 0 (unused) = 2210.50;
    # Σ billed_cost = 1200.00 (ml-research) + 600.50 (search) + 410.00 (unallocated: 10 + 400 + 0) = 2210.50.
    assert (feb["invoice_billed"], feb["chargeback_billed"]) == (Decimal("2210.50"), Decimal("2210.50"))
    # Chargeback (amortised): EffectiveCost 1200 + 600.50 + 10 + 300 + 0 + 60 = 2170.50, + API 1.25 = 2171.75;
    # Σ total_cost = 1500.00 + 601.75 + 70.00 = 2171.75. Against BilledCost alone it would be 38.75 short.
    assert feb["basis"] == "amortised" and feb["api_spend"] == Decimal("1.25")
    assert (feb["invoice_total"], feb["chargeback_total"]) == (Decimal("2171.75"), Decimal("2171.75"))
    assert feb["billed_difference"] == 0 and feb["total_difference"] == 0
    assert recon["billed_reconciled"].all() and recon["total_reconciled"].all() and len(recon) == 3
    # Jan USD: 1000.105 + 80 - 100 + 500.25 + 33.333333333333 = 1513.688333333333 on both bases, no API.
    assert recon.loc[(date(2025, 1, 1), "USD"), "invoice_total"] == Decimal("1513.688333333333")
    assert recon.loc[(date(2025, 2, 1), "EUR"), "invoice_billed"] == Decimal("99.99")


def test_reconciliation_catches_a_gap_on_either_side(serving_db: Path) -> None:
    con = duckdb.connect(str(serving_db))
    # A cent more on search's EUR total only: 100.00 vs 99.99 -> the chargeback side fails, billed still holds.
    con.execute("update fct_chargeback_monthly set total_cost = total_cost + 0.01 where team_id = 'search' "
                "and currency = 'EUR'")
    # API spend nobody was charged: USD 2025-02 expects 2170.50 + 1.25 + 2.00 = 2173.75 vs 2171.75.
    con.execute("insert into fct_api_spend_daily (day, team_id, workload_id, provider, model, requests, failed, "
                "retried, input_tokens, output_tokens, cost, currency) values ('2025-02-10', 'search', 'wl-serve', "
                "'openai', 'gpt', 1, 0, 0, 1, 1, 2.00, 'USD')")
    # A billed-basis gap: the plan fee moved off the invoice share (410.00 -> 409.00) -> billed 2209.50 vs 2210.50.
    con.execute("update fct_chargeback_monthly set billed_cost = billed_cost - 1 where team_id = '(unallocated)' "
                "and billing_period_start = '2025-02-01'")
    con.close()
    recon = serving.reconciliation(serving_db).set_index(["period", "currency"])
    eur, usd = recon.loc[(date(2025, 2, 1), "EUR")], recon.loc[(date(2025, 2, 1), "USD")]
    assert eur["total_difference"] == Decimal("0.01") and not eur["total_reconciled"] and eur["billed_reconciled"]
    assert usd["total_difference"] == Decimal("-2.00") and not usd["total_reconciled"]
    assert usd["billed_difference"] == Decimal("-1.00") and not usd["billed_reconciled"]
    assert recon.loc[(date(2025, 1, 1), "USD"), ["billed_reconciled", "total_reconciled"]].all()


def test_three_figures_per_month_and_for_a_team(serving_db: Path) -> None:
    f = serving.figures(serving_db).set_index(["period", "currency"])
    # Jan USD: invoice 1513.688333333333; chargeback the same (no API, EffectiveCost = BilledCost);
    # showback + 2000 (list-priced) + 750 (research, owned) + 50 (estimate) + 100 (labour) = 4413.688333333333.
    jan = f.loc[(date(2025, 1, 1), "USD")]
    assert (jan["invoice"], jan["chargeback"], jan["showback"]) == (
        Decimal("1513.688333333333"), Decimal("1513.688333333333"), Decimal("4413.688333333333"))
    # Feb USD: 2210.50 -> 2171.75 -> 2171.75 + 30 (estimate) + 25 (idle not on a bill) = 2226.75.
    feb = f.loc[(date(2025, 2, 1), "USD")]
    assert (feb["invoice"], feb["chargeback"], feb["showback"], feb["basis"]) == (
        Decimal("2210.50"), Decimal("2171.75"), Decimal("2226.75"), "amortised")
    # The same three figures are the bridge's Invoice, Chargeback and All-in showback rows.
    bridge = serving.cost_bridge(serving_db, month=date(2025, 2, 1), currency="USD").set_index("step")
    assert bridge.loc["Invoice", "amount"] == feb["invoice"]
    assert bridge.loc["Amortisation adjustments", "amount"] == Decimal("-40.00")  # 2170.50 - 2210.50
    assert bridge.loc["Chargeback", "running_total"] == feb["chargeback"]
    assert bridge.loc["All-in showback", "running_total"] == feb["showback"]
    # research has no invoice line: invoice share 0, chargeback 0, showback 750.00 (owned-hardware training).
    research = serving.figures(serving_db, team="research")
    assert research[["invoice", "chargeback", "showback"]].values.tolist() == [[0, 0, Decimal("750.00")]]
    # ml-research Feb: invoice share 1200.00 (plan-covered usage bills 0), chargeback 1200 + 300 = 1500.00.
    ml = serving.figures(serving_db, team="ml-research", start=date(2025, 2, 1), currency="USD").iloc[0]
    assert (ml["invoice"], ml["chargeback"], ml["showback"]) == (Decimal("1200.00"), Decimal("1500.00"),
                                                                 Decimal("1500.00"))
    story = serving.money_story(serving_db).set_index("currency")
    # USD: invoice 1513.688333333333 + 2210.50; chargeback + 2171.75; showback 4413.688333333333 + 2226.75.
    assert story.loc["USD", ["invoice", "chargeback", "showback"]].tolist() == [
        Decimal("3724.188333333333"), Decimal("3685.438333333333"), Decimal("6640.438333333333")]


def test_budgets_and_unpriced_usage(serving_db: Path) -> None:
    b = serving.team_budgets(serving_db, team="ml-research", month=date(2025, 1, 1)).iloc[0]
    # budget 1500; chargeback 980.105 -> 519.895 left; showback 3130.105 (980.105 + 2000 + 50 + 100) -> -1630.105.
    assert (b["budget_remaining_chargeback"], b["budget_remaining_showback"]) == (Decimal("519.895"),
                                                                                 Decimal("-1630.105"))
    usage = serving.usage_pricing(serving_db)
    unpriced = usage[usage["pricing_status"] == "unpriced"]
    assert unpriced["gpu_hours"].sum() == pytest.approx(166.5)  # 120 + 36.5 + 10
    assert unpriced["amount"].isna().all()  # never 0
    priced = usage.set_index("pricing_status")
    assert priced.loc["owned-hardware", "amount"] == Decimal("750.00")  # 375 h x 2.00
    assert serving.unpriced_gpu_hours(serving_db)["reason"].iloc[0] == "no provider: slurm:hpc1 is on no bill line"


def test_minimal_publication_reconciles_without_api_spend(minimal_serving: Path) -> None:
    recon = serving.reconciliation(minimal_serving)
    assert recon["total_reconciled"].all() and (recon["api_spend"] == 0).all()
    assert serving.figures(minimal_serving)["showback"].isna().all()


def test_unit_costs_and_waste_share(serving_db: Path) -> None:
    df = serving.unit_costs(serving_db, workload="wl-train")
    jan = df[df["period"] == date(2025, 1, 1)].iloc[0]
    assert jan["waste_cost"] == Decimal(200)  # idle 60 + retry 0 + failure 140
    assert jan["waste_share"] == pytest.approx(200 / 1200)
    assert jan["effective_unit_cost"] == Decimal(400)


def test_utilisation_idle_share(serving_db: Path) -> None:
    df = serving.utilisation(serving_db, team="ml-research")
    assert df["idle_share"].round(4).tolist() == [0.3, round(10 / 120, 4)]


def test_stale_prices_and_threshold(serving_db: Path) -> None:
    stale = serving.stale_prices(serving_db, max_age_days=7)
    assert stale[["provider", "sku", "age_days"]].values.tolist() == [["coreweave", "gd-1xh100", 57]]
    assert serving.stale_prices(serving_db, max_age_days=60).empty


def test_quality_tables(serving_db: Path) -> None:
    rejects = serving.rejects_by_source(serving_db)
    assert dict(rejects.groupby("source_family")["rejected_rows"].sum()) == {"billing": 2, "usage": 1}
    checks = serving.check_results(serving_db)
    # The warning comes first and stays a warning (never a pass); its found row is published with it.
    assert checks["status"].tolist() == ["warn", "pass", "pass"]
    assert checks["check_name"].iloc[0] == "price_freshness"
    found = serving.check_failures(serving_db, "price_freshness")
    assert found["failing_row"].tolist() == ['{"sku": "gd-1xh100", "age_days": 9}']
    assert serving.check_failures(serving_db, "cost_conserved").empty
    pub = serving.publication(serving_db)
    assert pub["run_id"] == "run-fixture-0042" and pub["checks_run"] == 12


def test_distinct_choices(serving_db: Path) -> None:
    assert serving.distinct(serving_db, "fct_chargeback_monthly", "currency", most_common_first=True) == ["USD", "EUR"]
    assert serving.distinct(serving_db, "fct_chargeback_monthly", "no_such_column") == []
    assert serving.distinct(serving_db, "no_such_table", "team_id") == []


def test_missing_tables_and_columns_say_not_published(minimal_serving: Path) -> None:
    with pytest.raises(serving.NotPublished, match="fct_workload_unit_cost is not published"):
        serving.unit_costs(minimal_serving)
    assert "budget_monthly" not in serving.chargeback(minimal_serving).columns
    assert serving.distinct(minimal_serving, "fct_gpu_price_history", "provider") == []
    with pytest.raises(serving.NotPublished, match="has no column"):
        serving.require(minimal_serving, "fct_chargeback_monthly", ["forecast_month_end"])


def test_no_publication_at_all(tmp_path: Path) -> None:
    missing = tmp_path / "serving.duckdb"
    assert serving.publication(missing) is None and serving.schema(missing) == {}
    with pytest.raises(serving.NotPublished, match="not published yet"):
        serving.chargeback(missing)


def test_unknown_workload_table_is_refused(serving_db: Path) -> None:
    with pytest.raises(ValueError):
        serving.workload_table(serving_db, "publication; drop table ledger_focus", "wl-serve")


def test_reads_are_read_only(serving_db: Path) -> None:
    with pytest.raises(duckdb.Error):
        serving.query(serving_db, "create table t as select 1")


@pytest.mark.parametrize(("amount", "currency", "text"), [
    (Decimal("980.105"), "USD", "USD 980.11"),
    (Decimal(-100), "USD", "USD -100.00"),
    (Decimal("1234567.994999"), "EUR", "EUR 1,234,567.99"),
    (None, "USD", "n/a"),
])
def test_fmt_money(amount: Decimal | None, currency: str, text: str) -> None:
    assert fmt_money(amount, currency) == text


def test_home_resolution_reads_env_at_call_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU_LEDGER_HOME", str(tmp_path))
    assert serving.serving_path() == tmp_path.resolve() / "serving.duckdb"


@pytest.mark.parametrize(("amount", "text"), [
    (Decimal("0.005508474576"), "USD 0.005508"), (Decimal(400), "USD 400.00"), (None, "n/a"),
    # 2.152e-05 as the page once printed it: 4 significant digits, plain decimal
    (Decimal("0.0000215234"), "USD 0.00002152"), (Decimal("0.5"), "USD 0.5000"), (Decimal(0), "USD 0.00"),
])
def test_fmt_unit_cost_keeps_small_unit_costs_readable(amount: Decimal | None, text: str) -> None:
    assert fmt_unit_cost(amount, "USD") == text
