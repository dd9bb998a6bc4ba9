"""Browser tests: the Streamlit app over a fixture publication, driven by Debian chromium via Playwright.

Each page is checked for the fixture's numbers, a filter change must change the numbers shown, a
failed refresh must say so, and a publication with only today's tables must degrade with notes,
not errors. Screenshots go to HOME/reports/screenshots/; first-render times are printed (run with
-s to see them) and written beside the screenshots, never asserted: they depend on the machine.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from reporting.formatting import fmt_money
from reporting.team_reports import write_team_reports
from tests.dashboards.serving_fixture import build_serving

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api")

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
# url path, expected title, texts the fixture guarantees on first render.
PAGES = [
    ("", "Overview", ["Invoice (USD)", "Chargeback (USD)", "All-in showback (USD)", "11.5%", "1.32x",
                      "Unpriced GPU-hours", "166.5"]),
    ("workloads", "Workloads", ["USD 650.00", "118,000 / 120,000", "USD 0.005508"]),
    ("gpu_decision", "GPU decision", ["coreweave-l40s", "measured 62%", "2,470.00"]),
    ("prices", "GPU prices", ["USD 1.10", "2025-02-27 00:00 UTC"]),
    ("chargeback", "Chargeback", ["USD 980.11", "All 2 period/currency totals reconcile to the invoice, on both",
                                  "Invoice share, billed (USD)", "Unused commitment (USD)", "Budget left after all-in"]),
    ("data_quality", "Data quality", ["11/12", "run-fixture-0042", "gd-1xh100", "Rejected rows",
                                      "1 warnings and 0 failed", "WARN · price_freshness",
                                      "no provider: slurm:hpc1 is on no bill line", "unknown GPU model", "USD 750.00"]),
]
RENDER_TIMES: dict[str, float] = {}

if not Path(CHROMIUM).exists():
    # A failure, not a skip: a suite that silently drops its browser tests would pass untested pages.
    pytest.fail(f"{CHROMIUM} is not installed: run `make browser` (Debian chromium) first", pytrace=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_streamlit(home: Path) -> Iterator[str]:
    """Run the app against `home` on a free port; yields its URL and stops it afterwards."""
    port = _free_port()
    log = (home / "streamlit.log").open("w")
    env = {**os.environ, "GPU_LEDGER_HOME": str(home), "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "dashboards/app.py", "--server.address", "127.0.0.1",
         "--server.port", str(port), "--server.headless", "true"],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"streamlit exited: {(home / 'streamlit.log').read_text()}")
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("streamlit did not become healthy within 60 s")
                time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("browser") / "home"
    build_serving(home)
    return home


@pytest.fixture(scope="module")
def app_url(home: Path) -> Iterator[str]:
    yield from _start_streamlit(home)


@pytest.fixture(scope="module")
def minimal_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    minimal = tmp_path_factory.mktemp("minimal") / "home"
    build_serving(minimal, minimal=True)
    yield from _start_streamlit(minimal)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture()
def page(browser: object) -> Iterator[object]:
    pg = browser.new_page(viewport={"width": 1400, "height": 1000})
    yield pg
    pg.close()


def _open(page: object, url: str, texts: list[str]) -> float:
    """Go to a page and wait until the banner and every text are rendered; returns seconds taken."""
    start = time.perf_counter()
    page.goto(url)
    page.wait_for_selector('[data-testid="stAppViewContainer"]')
    page.get_by_text("data as of").first.wait_for(timeout=30_000)
    _wait_texts(page, texts)
    return time.perf_counter() - start


def _wait_texts(page: object, texts: list[str], absent: list[str] = ()) -> None:
    page.wait_for_function(
        "([want, gone]) => want.every(t => document.body.innerText.includes(t))"
        " && gone.every(t => !document.body.innerText.includes(t))",
        arg=[texts, list(absent)], timeout=30_000)


def _choose(page: object, label: str, option: str) -> None:
    """Pick an option in a sidebar select box the way a user does."""
    page.get_by_test_id("stSelectbox").filter(has_text=label).click()
    page.get_by_role("option", name=option, exact=True).click()


def _no_exceptions(page: object) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0, page.inner_text("body")[:2000]


@pytest.mark.parametrize(("path", "title", "texts"), PAGES, ids=[p[1] for p in PAGES])
def test_page_shows_fixture_numbers(page: object, app_url: str, home: Path, path: str, title: str,
                                    texts: list[str]) -> None:
    seconds = _open(page, f"{app_url}/{path}", [title, *texts])
    _no_exceptions(page)
    page.wait_for_timeout(800)  # let plotly finish drawing before the screenshot
    shots = home / "reports" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / f"{path or 'overview'}.png"), full_page=True)
    RENDER_TIMES[title] = round(seconds, 2)
    (shots / "first_render_seconds.json").write_text(json.dumps(RENDER_TIMES, indent=2))
    print(f"first render {title}: {seconds:.2f} s")


def _figures(home: Path, month: str | None = None, currency: str = "USD") -> list[str]:
    """The three figures as the pages must show them, computed here from the fixture's marts (not the page)."""
    con = duckdb.connect(str(home / "serving.duckdb"), read_only=True)
    try:
        where = "currency = ? and (?::date is null or {0} = ?::date)"
        args = [currency, month, month]
        invoice = con.execute("select sum(BilledCost) from ledger_focus where BillingCurrency = ? and "
                              "(?::date is null or BillingPeriodStart = ?::date)", args).fetchone()[0]
        chargeback = con.execute("select sum(total_cost) from fct_chargeback_monthly where "
                                 + where.format("billing_period_start"), args).fetchone()[0]
        showback = con.execute("select sum(amount) from fct_showback_monthly where " + where.format("period"),
                               args).fetchone()[0]
        # The bridge agrees: its Invoice, Chargeback and All-in showback rows are the same three figures.
        steps = dict(con.execute("select step, sum(running_total) from fct_cost_bridge where step in ('Invoice', "
                                 "'Chargeback', 'All-in showback') and " + where.format("period") + " group by step",
                                 args).fetchall())
    finally:
        con.close()
    assert [steps["Invoice"], steps["Chargeback"], steps["All-in showback"]] == [invoice, chargeback, showback]
    return [fmt_money(v, currency) for v in (invoice, chargeback, showback)]


@pytest.mark.parametrize("path", ["", "chargeback"], ids=["Overview", "Chargeback"])
def test_three_figures_match_the_marts(page: object, app_url: str, home: Path, path: str) -> None:
    invoice, chargeback, showback = _figures(home)
    assert invoice != chargeback  # the fixture's savings plan and API spend make the figures differ
    _open(page, f"{app_url}/{path}", ["Invoice (USD)", invoice, "Chargeback (USD)", chargeback,
                                      "All-in showback (USD)", showback, "amortised basis"])
    _no_exceptions(page)
    assert "do not reconcile" not in page.inner_text("body")
    if path == "chargeback":
        _choose(page, "Month", "2025-02")
        feb = _figures(home, "2025-02-01")
        _wait_texts(page, feb, absent=[invoice])
        page.get_by_text("Bridge: Invoice → Chargeback → All-in showback").click()
        _wait_texts(page, ["Amortisation adjustments", "USD -40.00", "= All-in showback"])
        assert "do not reconcile" not in page.inner_text("body")


def test_team_filter_changes_chargeback_numbers(page: object, app_url: str) -> None:
    _open(page, f"{app_url}/chargeback", ["USD 3,685.44"])
    _choose(page, "Team", "ml-research")
    _wait_texts(page, ["USD 2,480.11"], absent=["USD 3,685.44"])  # 980.105 + 1500.00 (amortised)


def test_provider_filter_changes_overview_numbers(page: object, app_url: str) -> None:
    _open(page, app_url, ["USD 3,724.19"])
    _choose(page, "Provider", "coreweave")
    _wait_texts(page, ["USD 2,300.75"], absent=["USD 3,724.19"])  # 500.25 + 1200.00 + 600.50


def test_failed_refresh_is_announced(page: object, app_url: str, home: Path) -> None:
    status = home / "last_refresh.json"
    saved = status.read_text()
    status.write_text(json.dumps({"ok": False, "run_id": "run-0043", "message": "blocking check cost_conserved failed",
                                  "finished_at": "2025-03-01T06:00:00Z"}))
    try:
        _open(page, f"{app_url}/chargeback", [("Last refresh failed because blocking check cost_conserved failed; "
                                              "showing the publication of 2025-02-28 06:00 UTC"), "USD 3,685.44"])
    finally:
        status.write_text(saved)


@pytest.mark.parametrize(("path", "texts"), [
    ("", ["USD 3,724.19", "Not published yet: table fct_workload_unit_cost"]),
    ("workloads", ["Not published yet"]),
    ("gpu_decision", ["Not published yet: table fct_candidate_comparison"]),
    ("prices", ["Not published yet: table fct_gpu_price_history"]),
    ("chargeback", ["USD 980.11", "table fct_team_budget_monthly", "All 2 period/currency totals reconcile"]),
    ("data_quality", ["11/12", "Not published yet: table fct_gpu_price_history"]),
])
def test_todays_publication_degrades_gracefully(page: object, minimal_url: str, path: str, texts: list[str]) -> None:
    _open(page, f"{minimal_url}/{path}", texts)
    _no_exceptions(page)


def test_team_report_renders_to_a_non_blank_png(browser: object, home: Path) -> None:
    html = next(p for p in write_team_reports(home / "serving.duckdb", home / "reports", team="ml-research",
                                              month="2025-01") if p.suffix == ".html")
    shots = home / "reports" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    png, pdf = shots / "report_ml-research_2025-01.png", shots / "report_ml-research_2025-01.pdf"
    pg = browser.new_page(viewport={"width": 1000, "height": 1200})
    try:
        pg.goto(html.as_uri())
        assert "Chargeback: USD 980.11" in pg.inner_text("body")
        pg.screenshot(path=str(png), full_page=True)
        pg.emulate_media(media="print")
        pg.pdf(path=str(pdf), format="A4")
    finally:
        pg.close()
    assert png.stat().st_size > 10_000 and pdf.stat().st_size > 5_000
    image = pytest.importorskip("PIL.Image").open(png).convert("L")
    dark = sum(image.histogram()[:200])  # pixels clearly darker than white: text, bars, rules
    assert dark / (image.width * image.height) > 0.01
