"""Exchange rates on the bundled samples: one total in USD beside the native figures."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from tests import golden_cases


@pytest.fixture(scope="module")
def home(sample_run: dict) -> Path:
    assert sample_run["ok"], sample_run["reason"]
    return sample_run["home"]


def _rows(home: Path, sql: str) -> list[dict]:
    """Rows of the published copy (the shared golden-case reader)."""
    with golden_cases.published({"home": home, "ok": True, "reason": None}) as con:
        return golden_cases.rows(con, sql)


def test_cad_bill_converts_at_the_ecb_rate_of_its_charge_day(home: Path) -> None:
    # The CAD lines are charged Saturday 2023-09-02: the ECB's Friday 2023-09-01 rates apply (age 1):
    # EUR->USD 1.0844, EUR->CAD 1.4656 (samples/inputs/fx/eurofxref-hist.csv) -> 1 CAD = 1.0844 / 1.4656
    # = 0.7399017467 USD (10 decimals).
    (fx,) = _rows(home, "select * from fct_fx_rates_daily where currency = 'CAD' and day = '2023-09-02'")
    assert str(fx["rate_date"]) == "2023-09-01" and fx["rate_age_days"] == 1
    rate = round(Decimal("1.0844") / Decimal("1.4656"), 10)
    assert fx["rate_to_reporting"] == rate == Decimal("0.7399017467")
    (cad,) = _rows(home, "select * from fct_money_reporting where currency = 'CAD'")
    assert cad["invoice_reporting"] == round(cad["invoice"] * rate, 12)
    assert cad["fx_gap_reason"] is None
    usd = _rows(home, "select * from fct_money_reporting where currency = 'USD'")
    assert all(r["invoice_reporting"] == r["invoice"] for r in usd if r["invoice"] is not None)


def test_one_total_in_usd_and_no_offer_without_a_rate(home: Path) -> None:
    rows = _rows(home, "select * from fct_money_reporting")
    assert {r["reporting_currency"] for r in rows} == {"USD"}
    assert all(r["fx_gap_reason"] is None for r in rows)
    # Every CNY price in the facts converts at the rate of its observation day (2024-11-06).
    missing = _rows(home, "select o.* from fct_gpu_offers_current o left join fct_fx_rates_daily fx "
                          "on fx.currency = o.currency and fx.day = cast(o.last_observed_at as date) "
                          "where o.currency <> 'USD' and fx.rate_to_reporting is null")
    assert missing == []


def test_run_summary_prints_one_total_in_usd(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pipelines.cli_summary import print_money_story

    (total,) = _rows(home, "select sum(invoice_reporting) as i, sum(chargeback_reporting) as c, "
                           "sum(showback_reporting) as s from fct_money_reporting")
    print_money_story(home / "serving.duckdb")
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if "all, in USD" in ln)
    for key in ("i", "c", "s"):  # the CAD bill's 0.93 USD is inside each total
        assert f"{total[key]:,.2f}" in line, (key, line)
