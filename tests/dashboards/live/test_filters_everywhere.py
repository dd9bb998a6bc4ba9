"""Every filter reaches every figure (or the figure says it is company-wide), on the real sample publication:
the Anomalies & forecast page by team, one series per team in the reporting currency, the Overview's
unpriced GPU-hours by month, and a check's CSV with every row it found while the page shows a few."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dashboards.test_browser import (
    _choose,
    _marts,
    _metric,
    _no_exceptions,
    _one,
    _open,
    _settled,
    _wait_texts,
)

pytestmark = pytest.mark.browser


def test_anomalies_page_follows_team_and_currency(page: object, app_url: str, home: Path) -> None:
    teams = sorted(t for (t,) in _marts(home, "select distinct team_id from fct_spend_forecast "
                                              "where currency = 'USD' and basis = 'chargeback'"))
    assert "support" in teams and len(teams) > 1
    _open(page, f"{app_url}/anomalies", "Anomalies & forecast")
    _wait_texts(page, [f"{t}: chargeback forecast with its interval (USD)" for t in teams])
    _choose(page, "Team", "support")
    others = [f"{t}: chargeback forecast" for t in teams if t != "support"]
    _wait_texts(page, ["Showing team support (its own series and its workloads), USD",
                       "support: chargeback forecast with its interval (USD)"], absent=others)
    _no_exceptions(page)


def test_a_team_billed_in_two_currencies_has_one_series_in_usd(page: object, app_url: str, home: Path) -> None:
    # The unallocated CAD bill charged Saturday 2023-09-02 (1.261369 CAD) converts at Friday's ECB rate
    # 1.0844 / 1.4656 = 0.7399017467 -> 0.933289 USD and joins the unallocated USD series: no CAD series is left.
    assert _marts(home, "select distinct currency from fct_anomaly_daily union "
                        "select distinct currency from fct_spend_forecast") == [("USD",)]
    day, actual = _marts(home, "select day, actual from fct_anomaly_daily where dimension = 'team' and "
                               "dimension_value = '(unallocated)' order by day limit 1")[0]
    assert (str(day), round(float(actual), 2)) == ("2023-09-02", 0.93)
    _open(page, f"{app_url}/anomalies", "Anomalies & forecast")
    _choose(page, "Team", "(unallocated)")
    _wait_texts(page, ["Showing team (unallocated) (its own series and its workloads), USD"], absent=["CAD"])
    _no_exceptions(page)


def test_overview_unpriced_hours_follow_the_month(page: object, app_url: str, home: Path) -> None:
    # The Overview offers the months of the chargeback and the showback; take the latest and its unpriced hours.
    month = _one(home, "select strftime(max(m), '%Y-%m') from (select billing_period_start as m from "
                       "fct_chargeback_monthly where currency = 'USD' union select period from fct_showback_monthly "
                       "where currency = 'USD')")
    hours = _one(home, "select coalesce(sum(gpu_hours), 0) from fct_off_bill_usage where pricing_status = 'unpriced' "
                       "and strftime(date_trunc('month', day), '%Y-%m') = ?", [month])
    total = _one(home, "select sum(gpu_hours) from fct_off_bill_usage where pricing_status = 'unpriced'")
    assert hours < total  # the month holds only part of the unpriced hours, so the tile must change
    _open(page, app_url, "Overview")
    _choose(page, "Currency", "USD")
    _choose(page, "Team", "All")
    assert _metric(page, "Unpriced GPU-hours") == f"{total:,.1f} GPU-hours"
    _choose(page, "Month", month)
    _wait_texts(page, [f"{hours:,.1f} GPU-hours"])
    assert _metric(page, "Unpriced GPU-hours") == f"{hours:,.1f} GPU-hours"


def test_a_checks_csv_holds_every_row_it_found(page: object, app_url: str, home: Path) -> None:
    # The warning that found the most rows (more than the page shows).
    name, detail = _marts(home, "select r.check_name, r.detail from check_results r join check_failures f "
                                "using (check_name) where r.status = 'warn' group by all "
                                "order by count(*) desc, r.check_name limit 1")[0]
    rows = _one(home, "select count(*) from check_failures where check_name = ?", [name])
    found = int(detail.rsplit(": ", 1)[1].split(" ")[0].replace(",", ""))
    assert rows == found > 20  # every failing row is published, not the first few
    _open(page, f"{app_url}/data_quality", "Data quality")
    page.get_by_text(detail, exact=False).first.click()
    _settled(page)
    _wait_texts(page, [f"{rows:,} rows found; the first {min(rows, 20)} are shown, the CSV holds them all.",
                       f"Download CSV ({rows:,} rows)"])
