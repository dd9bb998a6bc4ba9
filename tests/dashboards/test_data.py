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


def test_reconciliation_matches_invoice_and_catches_a_gap(serving_db: Path) -> None:
    recon = serving.reconciliation(serving_db)
    assert recon["reconciled"].all()
    assert recon.set_index(["currency"]).loc["EUR", "invoice_total"] == Decimal("99.99")
    con = duckdb.connect(str(serving_db))
    con.execute("update fct_chargeback_monthly set total_cost = total_cost + 0.01 where team_id = 'search' "
                "and currency = 'EUR'")
    con.close()
    recon = serving.reconciliation(serving_db)
    bad = recon[~recon["reconciled"]]
    assert bad[["currency", "difference"]].values.tolist() == [["EUR", Decimal("0.01")]]


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
])
def test_fmt_unit_cost_keeps_small_unit_costs_readable(amount: Decimal | None, text: str) -> None:
    assert fmt_unit_cost(amount, "USD") == text
