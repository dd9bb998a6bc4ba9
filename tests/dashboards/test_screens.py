"""The screen readers (warehouse.serving_screens) and display formats on the real sample home (`sample_run`)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from dashboards.ui import unit_cost
from warehouse import serving, serving_screens


@pytest.fixture(scope="module")
def db(sample_run: dict) -> Path:
    assert sample_run["ok"], sample_run["reason"]
    return Path(sample_run["home"]) / "serving.duckdb"


def _sql(db: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_filter_keys_are_the_combinations_that_have_data(db: Path) -> None:
    keys = serving_screens.filter_keys(db, "unit_cost")
    expected = _sql(db, "select team_id, workload_id, period, currency, count(*) from fct_workload_unit_cost "
                        "group by all order by all")
    assert [tuple(r) for r in keys.itertuples(index=False)] == expected
    # What the Workloads page offers after Team=creative: only creative's workloads.
    creative = sorted(keys.loc[keys["team"] == "creative", "workload"])
    assert creative == sorted(w for (w,) in _sql(db, "select distinct workload_id from fct_workload_unit_cost "
                                                     "where team_id = 'creative'"))
    assert 0 < len(creative) < keys["workload"].nunique()
    # Overview also offers months that only the all-in showback has (no invoice line in them).
    overview = {(t, m) for t, m in zip(*[serving_screens.filter_keys(db, "overview")[c] for c in ("team", "month")])}
    showback = {(t, p) for t, p in _sql(db, "select distinct team_id, period from fct_showback_monthly")}
    assert showback <= overview
    candidates = serving_screens.filter_keys(db, "candidates")
    assert candidates["team"].notna().all() and set(candidates["workload"]) == {
        w for (w,) in _sql(db, "select distinct workload_id from fct_candidate_comparison")}


def test_current_prices_are_the_cheapest_current_offer_per_model_and_category(db: Path) -> None:
    cur = serving_screens.current_prices(db, "USD")
    assert set(cur["currency"]) == {"USD"}
    assert not cur.duplicated(["gpu_model", "pricing_category"]).any()
    expected = {(m, c): p for m, c, p in _sql(
        db, "select gpu_model, pricing_category, min(price_per_gpu_hour) from fct_gpu_price_history "
            "where valid_to is null and currency = 'USD' and gpu_model is not null group by all")}
    assert dict(zip(zip(cur["gpu_model"], cur["pricing_category"]), cur["price_per_gpu_hour"])) == expected
    # An undated price has no age (None), never the days since it was loaded; every dated one has one.
    undated = cur["last_observed_at_basis"] == "undated"
    assert cur.loc[undated, "age_days"].isna().all() and (cur.loc[~undated, "age_days"] >= 0).all()
    assert (cur["highest_price"] >= cur["price_per_gpu_hour"]).all()
    assert "file_hash" not in serving_screens.price_history(db, cur["gpu_model"].iloc[0], "USD").columns


def test_stale_prices_by_provider_add_up_to_the_stale_list(db: Path) -> None:
    by_provider = serving_screens.stale_by_provider(db, 7)
    stale = serving.stale_prices(db, 7)
    assert int(by_provider["stale_prices"].sum()) == len(stale) > 0
    assert dict(zip(by_provider["provider"], by_provider["stale_prices"])) == stale["provider"].value_counts().to_dict()
    assert serving_screens.stale_by_provider(db, 100_000).empty


@pytest.mark.parametrize(("amount", "text"), [
    (Decimal("0.00007563"), "USD 0.00007563"), (2.152e-05, "USD 0.00002152"), (Decimal("0.1078"), "USD 0.1078"),
    (Decimal("31.6904"), "USD 31.69"), (Decimal(0), "USD 0.00"), (None, "n/a"),
])
def test_unit_costs_never_print_in_scientific_notation(amount: Decimal | float | None, text: str) -> None:
    assert unit_cost(amount, "USD") == text


def test_data_quality_page_shows_the_input_gates(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Data quality page (rendered by Streamlit's AppTest, no browser) counts what the marts hold:
    the team tag values no registered team answers to, no held-out bill, no credential in the samples."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("GPU_LEDGER_HOME", str(db.parent))
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "dashboards" / "views" / "data_quality.py"),
                           default_timeout=120)
    at.run()
    assert [e.value for e in at.exception] == []
    [(values,)] = _sql(db, "select count(distinct tag_value) from fct_unmatched_team_tags")
    assert values > 0  # the sample FOCUS file's business_unit values name no sample team
    assert any(w.value.startswith(f"{values} team tag values name no registered team") for w in at.warning)
    assert _sql(db, "select count(*) from fct_billing_held_out") == [(0,)]
    successes = [s.value for s in at.success]
    assert "Every bill line has a currency: none is held out of the ledger." in successes
    assert "No credential was found in any loaded file." in successes
