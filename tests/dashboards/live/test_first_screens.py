"""First screens at 1440 px on a real published home (the session's sample refresh), as a new analyst sees them.

Every page: its headline figures with units in the first 1000 px, no raw column name from FORBIDDEN, no
NaN / None / 0E- anywhere on the page, nothing wider than the window (page, printed tables, metric values,
charts, grids that would hide columns), and a full-page screenshot kept as an artifact in
<pytest tmp>/first-screens*/ (printed at the end; with GPU_LEDGER_DOC_SCREENSHOTS=1 the Overview and GPU
decision first screens are also written to docs/ as the README shows them).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from reporting.formatting import fmt_money
from tests.dashboards.test_browser import (
    _choose,
    _marts,
    _no_exceptions,
    _one,
    _open,
    _settled,
    _wait_texts,
)

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[3]
WIDTH, HEIGHT = 1440, 1000
# Column names as published: a screen names every column with a label from reporting.formatting.COLUMN_LABELS.
FORBIDDEN = ("dimension_value", "series_days", "api_cost", "platform_labor", "team_id", "workload_id",
             "billing_period_start", "total_cost", "monthly_savings", "effective_unit_cost", "gpu_hours",
             "idle_capacity", "failure_waste", "step_kind", "running_total", "check_name", "pricing_status",
             "budget_monthly", "first_day", "assert_", "configured to warn")
RAW_VALUES = re.compile(r"\bNaN\b|\bnan\b|\bNone\b|0E-\d")
HASH_KEY = re.compile(r"\b[0-9a-f]{32}\b|\b[0-9a-f]{64}\b")  # md5 / sha256 surrogate keys mean nothing on screen
PAGES = [("", "Overview"), ("workloads", "Workloads"), ("gpu_decision", "GPU decision"), ("prices", "GPU prices"),
         ("chargeback", "Chargeback"), ("anomalies", "Anomalies & forecast"), ("data_quality", "Data quality"),
         ("reports", "Reports")]


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("first-screens")
    yield folder
    print(f"\nfirst-screen screenshots: {folder}")


def _first_screen_text(page: object) -> str:
    """The text of the elements whose top is inside the first window height (what is seen without scrolling)."""
    return page.evaluate(f"""() => Array.from(document.querySelectorAll(
        '[data-testid=stMain] [data-testid=stMetric], [data-testid=stMain] h1, [data-testid=stMain] .js-plotly-plot, '
        + '[data-testid=stMain] [data-testid=stTable], [data-testid=stMain] [data-testid=stMarkdownContainer], '
        + '[data-testid=stMain] [data-testid=stAlert]'))
        .filter(el => el.getBoundingClientRect().top < {HEIGHT} && el.getClientRects().length > 0)
        .map(el => el.innerText || el.textContent).join('\\n')""")


def _too_wide(page: object) -> list[str]:
    return page.evaluate("""() => {
        const out = [], vw = window.innerWidth;
        const main = document.querySelector('[data-testid=stMain]');
        if (main.scrollWidth > main.clientWidth + 1) out.push('page ' + main.scrollWidth);
        for (const el of document.querySelectorAll('[data-testid=stTable] table, [data-testid=stMetricValue] > div, '
                                                   + '.js-plotly-plot')) {
            if (el.closest('details:not([open])') || el.getClientRects().length === 0) continue;
            const r = el.getBoundingClientRect();
            if (r.right > vw + 1 || el.scrollWidth > el.parentElement.clientWidth + 1)
                out.push(el.tagName + ' ' + Math.round(r.right) + ' ' + el.innerText.slice(0, 50));
        }
        for (const el of document.querySelectorAll('[data-testid=stDataFrame] .dvn-scroller'))
            if (el.scrollWidth > el.clientWidth + 1) out.push('grid hides columns: ' + el.scrollWidth + ' > ' + el.clientWidth);
        return out; }""")


def _headlines(home: Path, title: str) -> list[str]:
    """Figures each first screen must show, with their unit, computed from the marts."""
    if title == "Overview":
        showback = _one(home, "select sum(amount) from fct_showback_monthly where currency = 'USD'")
        idle = _one(home, "select sum(amount) from fct_showback_monthly where currency = 'USD' "
                          "and component in ('idle_cost', 'idle_capacity')")
        return [fmt_money(showback, "USD"), "Idle cost (USD)", fmt_money(idle, "USD"), "Largest actions"]
    if title == "GPU decision":
        return ["Workloads compared", "Best option at equal demand", "Saving per month (USD)", "Evidence grade",
                "Next benchmark"]
    if title == "Chargeback":
        # Every currency converted into USD by default (the CAD bill at its ECB rate).
        return [fmt_money(_one(home, "select sum(chargeback_reporting) from fct_money_reporting"), "USD")]
    if title == "Data quality":
        return ["Warnings"]
    return []


@pytest.mark.parametrize(("path", "title"), PAGES, ids=[p[1] for p in PAGES])
def test_first_screen(page: object, app_url: str, home: Path, shots: Path, path: str, title: str) -> None:
    headlines = _headlines(home, title)
    _open(page, f"{app_url}/{path}", title)
    # The metrics can draw after the run-state marker settles on a busy machine: wait until each headline is on the
    # page at all, then assert where it is.
    _wait_texts(page, headlines)
    page.wait_for_timeout(1500)  # charts draw after the script run ends
    _no_exceptions(page)
    first = _first_screen_text(page)
    missing = [t for t in headlines if t not in first]
    assert not missing, f"not on the first screen: {missing}\n{first[:3000]}"
    text = page.inner_text('[data-testid="stMain"]')
    named = [name for name in FORBIDDEN if name in text]
    assert not named, [re.search(f".{{60}}{re.escape(n)}.{{30}}", text, re.DOTALL) for n in named]
    assert not RAW_VALUES.search(text), re.search(r".{60}(NaN|nan|None|0E-\d).{20}", text, re.DOTALL)
    assert not HASH_KEY.search(text), HASH_KEY.search(text)
    assert _too_wide(page) == []
    name = path or "overview"
    page.screenshot(path=str(shots / f"{name}_first_screen.png"))
    height = page.evaluate("document.querySelector('[data-testid=stMain]').scrollHeight")
    page.set_viewport_size({"width": WIDTH, "height": min(int(height) + 60, 16_000)})
    try:
        page.wait_for_timeout(1200)
        page.screenshot(path=str(shots / f"{name}_full.png"))
    finally:
        page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    assert (shots / f"{name}_first_screen.png").stat().st_size > 20_000
    if os.environ.get("GPU_LEDGER_DOC_SCREENSHOTS") == "1" and title in ("Overview", "GPU decision"):
        shutil.copy(shots / f"{name}_first_screen.png", REPO / "docs" / f"screen_{name}.png")


def test_overview_bridge_split_and_actions_follow_the_team(page: object, app_url: str, home: Path) -> None:
    team = "support"
    _open(page, app_url, "Overview")
    _choose(page, "Team", team)
    rows = _marts(home, "select source, component, cost_basis, amount from fct_showback_monthly "
                        "where team_id = ? and currency = 'USD'", [team])
    billed = sum((a for s, _, _, a in rows if s == "chargeback"), Decimal(0))
    labour = sum((a for s, c, _, a in rows if s != "chargeback" and c == "platform_labor"), Decimal(0))
    # The split's parts are the team's own showback rows: billed = its chargeback rows, labour = its platform labour.
    best = _marts(home, "select max(monthly_savings) from fct_candidate_comparison c join dim_workload w "
                        "using (workload_id) where w.team_id = ? and c.status in ('eligible', "
                        "'eligible pending evidence')", [team])[0][0]
    _wait_texts(page, [f"Invoice → Chargeback → All-in showback (team {team}, every month, USD)",
                       fmt_money(billed, None), fmt_money(labour, None), fmt_money(best, "USD"),
                       "Largest actions (team support, USD a month)"])
    _no_exceptions(page)


def test_overview_flags_the_dominant_estimate(page: object, app_url: str, home: Path) -> None:
    name, hours, amount = _marts(home, "select workload_id, sum(gpu_hours), sum(amount) from fct_off_bill_usage "
                                       "where currency = 'USD' and amount is not null group by 1 "
                                       "order by 3 desc limit 1")[0]
    showback = _one(home, "select sum(amount) from fct_showback_monthly where currency = 'USD'")
    assert amount / showback > Decimal("0.5")  # the sample's training run is most of the all-in showback
    _open(page, app_url, "Overview")
    _wait_texts(page, [f"One estimate dominates: {float(amount / showback):.0%} of the all-in showback",
                       f"workload {name} ({hours:,.0f} GPU-hours, {fmt_money(amount, 'USD')})"])


def test_gpu_decision_opens_on_every_workload_and_drills_into_one(page: object, app_url: str, home: Path) -> None:
    workloads = _one(home, "select count(distinct workload_id) from fct_candidate_comparison")
    workload = "chat-assistant-70b"
    best = _marts(home, "select candidate, monthly_savings, memory_margin_pct, memory_margin_min_pct, "
                        "quality_acceptance, quality_acceptance_min, slo_ttft_ms from fct_candidate_comparison "
                        "where workload_id = ? and status = 'eligible' order by rank limit 1", [workload])[0]
    _open(page, f"{app_url}/gpu_decision", "GPU decision")
    _wait_texts(page, [f"Workloads compared\n\n{workloads}", f"switch: {best[0]}", fmt_money(best[1], None)])
    box = page.get_by_role("combobox", name="Open one workload's candidates and gates", exact=True)
    box.click()
    box.press_sequentially(workload)
    page.get_by_role("option", name=workload, exact=True).click()
    _settled(page)
    # Every gate as measured vs target: memory 'x % margin (target ≥ 15 %)', quality 'y % accepted (target ≥ 90 %)',
    # latency 'TTFT measured / target ms'.
    _wait_texts(page, [f"{workload}: candidates and gates", f"{best[2]:,.1f} % margin (target ≥ {best[3]:g} %)",
                       f"{best[4]:.1%} accepted (target ≥ {best[5]:.0%})", f"/ {best[6]:,.0f} ms"])
    assert page.get_by_role("combobox", name="Workload", exact=True).input_value() == workload
    _no_exceptions(page)


def test_chargeback_shows_every_currency_converted_and_the_rates(page: object, app_url: str, home: Path) -> None:
    # The CAD bill (charged Saturday 2023-09-02) converts at the ECB's Friday rate 1.0844 / 1.4656: the page shows
    # the converted total of every currency and the rate of that row, computed from fct_money_reporting.
    invoice = _one(home, "select sum(invoice_reporting) from fct_money_reporting")
    rate = _one(home, "select effective_rate from fct_money_reporting where currency = 'CAD'")
    _open(page, f"{app_url}/chargeback", "Chargeback")
    _wait_texts(page, ["All currencies in one", "Invoice, all currencies (USD)", fmt_money(invoice, "USD"),
                       f"{float(rate):.6f}", "Commitments: committed vs used"])
    _no_exceptions(page)


def test_undated_prices_say_undated_never_their_load_time(page: object, app_url: str, home: Path) -> None:
    # The bundled gpuhunt and OCI files carry no time and were copied, not fetched: their prices are undated.
    undated, providers = _marts(home, "select count(*), count(distinct provider) from fct_gpu_price_history "
                                      "where valid_to is null and last_observed_at_basis = 'undated'")[0]
    assert undated > 0
    _open(page, f"{app_url}/data_quality", "Data quality")
    _wait_texts(page, [f"{undated:,} current prices from {providers} providers are undated"])
    _open(page, f"{app_url}/prices", "GPU prices")
    _wait_texts(page, ["Undated = nothing dates the price", "undated"])
    assert "0 days before the publication" not in page.inner_text("[data-testid=stMain]")
    _no_exceptions(page)


def test_reports_are_links_that_open_the_report(page: object, app_url: str, home: Path) -> None:
    # Every report row links to this page with ?report=<month>/<team>; following one previews that report.
    chargeback = _one(home, "select sum(total_cost) from fct_chargeback_monthly where team_id = 'support' "
                            "and billing_period_start = '2025-04-01' and currency = 'USD'")
    _open(page, f"{app_url}/reports", "Reports")
    _wait_texts(page, ["Download CSV"])
    reports = sorted(p.relative_to(home / "reports").with_suffix("").as_posix()
                     for p in (home / "reports").glob("*/*.html"))
    assert "2025-04/support" in reports, reports
    _open(page, f"{app_url}/reports?report=2025-04/support", "Reports")
    frame = page.frame_locator("[data-testid=stMain] iframe").first
    frame.locator("body").wait_for()
    assert f"Chargeback: {fmt_money(chargeback, 'USD')}" in frame.locator("body").inner_text()
    assert page.get_by_role("combobox", name="Report to open", exact=True).input_value() == "2025-04 · support"
    _no_exceptions(page)


def test_gpu_decision_workloads_are_links_that_open_the_workload(page: object, app_url: str, home: Path) -> None:
    workload = "search-embed"
    _open(page, f"{app_url}/gpu_decision", "GPU decision")
    link = page.locator("[data-testid=stMain] [data-testid=stTable] a", has_text=workload).first
    link.wait_for()
    href = link.get_attribute("href")
    assert href == f"?workload={workload}", href
    _open(page, f"{app_url}/gpu_decision{href}", "GPU decision")
    _wait_texts(page, [f"{workload}: candidates and gates"])
    assert page.get_by_role("combobox", name="Workload", exact=True).input_value() == workload
    _no_exceptions(page)
