"""The money switch every page shares, on the real sample publication (headless chromium): amounts in the
reporting currency by default with the rates used, native currency one click away, and no figure adding two
currencies unconverted. The samples bill USD and one CAD line (1.261369 CAD, charged Saturday 2023-09-02,
converted at the ECB's Friday rates 1.0844 / 1.4656 = 0.7399017467 -> 0.933289 USD)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from reporting.formatting import fmt_money
from tests.dashboards.test_browser import (
    _choose,
    _metric,
    _no_exceptions,
    _one,
    _open,
    _settled,
    _wait_texts,
)

pytestmark = pytest.mark.browser

# Every page that shows money (Data quality shows checks, not figures).
PAGES = [("", "Overview"), ("workloads", "Workloads"), ("gpu_decision", "GPU decision"), ("prices", "GPU prices"),
         ("chargeback", "Chargeback"), ("anomalies", "Anomalies & forecast"), ("reports", "Reports")]


def _flip(page: object, label: str) -> None:
    page.get_by_test_id("stSidebar").get_by_text(label, exact=True).click()
    _settled(page)


@pytest.mark.parametrize(("path", "title"), PAGES, ids=[t for _, t in PAGES])
def test_every_money_page_has_the_switch(page: object, app_url: str, path: str, title: str) -> None:
    _open(page, f"{app_url}/{path}", title)
    # The sidebar is drawn after the title: wait for the switch's label (60 s), then read the whole sidebar.
    page.get_by_test_id("stSidebar").get_by_text("Amounts in", exact=True).wait_for(timeout=60_000)
    side = page.get_by_test_id("stSidebar").inner_text()
    assert "Amounts in" in side and "Reporting currency: USD" in side and "Native: as billed" in side, side
    _no_exceptions(page)


def test_chargeback_converts_by_default_and_flips_to_native(page: object, app_url: str, home: Path) -> None:
    converted = _one(home, "select sum(invoice_reporting) from fct_money_reporting")
    usd = _one(home, "select sum(invoice) from fct_money_reporting where currency = 'USD'")
    cad = _one(home, "select sum(invoice) from fct_money_reporting where currency = 'CAD'")
    # 0.933289 USD of CAD inside the converted total; the unconverted sum USD + CAD would be another figure.
    assert converted - usd == pytest.approx(Decimal("0.933289"), abs=Decimal("0.000001"))
    unconverted = fmt_money(usd + cad, "USD")
    assert fmt_money(converted, "USD") != unconverted
    _open(page, f"{app_url}/chargeback", "Chargeback")
    _wait_texts(page, ["Amounts in USD, converted with the ECB euro reference rate", "at most 4 days earlier"])
    assert _metric(page, "Invoice (USD)") == fmt_money(converted, "USD")
    assert unconverted not in page.inner_text("body")  # never USD + CAD added as they are
    # Native: one billing currency at a time, as billed; the currency filter is back.
    _flip(page, "Native: as billed")
    _wait_texts(page, ["Amounts as billed, one currency at a time (no conversion)."])
    assert _metric(page, "Invoice (USD)") == fmt_money(usd, "USD")
    _choose(page, "Currency", "CAD")
    _wait_texts(page, ["Invoice (CAD)"])
    assert _metric(page, "Invoice (CAD)") == fmt_money(cad, "CAD")
    # The choice is shared: another page opens in native currency too (in-app navigation keeps the session).
    page.get_by_test_id("stSidebarNav").get_by_text("Workloads", exact=True).click()
    page.get_by_role("heading", name="Workloads", exact=True).wait_for()
    _settled(page)
    _wait_texts(page, ["Amounts as billed, one currency at a time (no conversion)."])
    _flip(page, "Reporting currency: USD")
    _wait_texts(page, ["Amounts in USD, converted with the ECB euro reference rate"])
    _no_exceptions(page)


def test_budgets_in_the_reporting_currency(page: object, app_url: str, home: Path) -> None:
    # support, April 2025: its budget and chargeback both in USD (rate 1) from fct_team_budget_converted.
    budget, charged = [_one(home, f"select {c} from fct_team_budget_converted where team_id = 'support' "
                                  "and period = '2025-04-01'") for c in ("budget_reporting", "chargeback_reporting")]
    _open(page, f"{app_url}/chargeback", "Chargeback")
    _choose(page, "Team", "support")
    _wait_texts(page, ["Budget consumed (USD)", fmt_money(budget, "USD"), fmt_money(charged, "USD")])
    _no_exceptions(page)


def test_team_report_states_the_reporting_currency_and_the_rates(home: Path) -> None:
    # The unallocated September 2023 report: its CAD bill converted (1.261369 x 0.7399017467 = 0.933289 USD).
    html = (home / "reports" / "2023-09" / "unallocated.html").read_text()
    assert "All currencies in one (USD, the reporting currency)" in html
    assert "Chargeback USD 0.93" in html and "CAD 0.739902" in html
    assert "Rates: ECB euro reference rate, observations" in html
    csv = (home / "reports" / "2023-09" / "unallocated.csv").read_text()
    assert "reporting_currency,(unallocated),2023-09,USD,(unallocated),chargeback_reporting,0.933289" in csv
