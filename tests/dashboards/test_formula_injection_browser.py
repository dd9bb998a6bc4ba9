"""Browser test: hostile team and workload names render as text on every page, never as a live link.

The publication is the serving fixture with its teams and workloads renamed to formula and Markdown payloads
(tests/security/test_formula_injection.py); Streamlit renders Markdown in st.table cells, expander labels,
captions and alerts, and Plotly reads <a href> in legends, ticks and hover text, so an unescaped
`[y](http://x)`, `http://x` or `<a href="http://x">` would become a live link.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright import sync_api

from reporting.team_reports import write_team_reports
from tests.dashboards.test_browser import CHROMIUM, CHROMIUM_ARGS, DONE, WIDTH, _start_streamlit
from tests.security.test_formula_injection import HTML_TEAM, LINK_TEAM, PAYLOADS, hostile_serving

pytestmark = pytest.mark.browser

PAGES = [("overview", "Overview"), ("workloads", "Workloads"), ("gpu_decision", "GPU decision"),
         ("prices", "GPU prices"), ("chargeback", "Chargeback"), ("anomalies", "Anomalies & forecast"),
         ("data_quality", "Data quality"), ("reports", "Reports")]


@pytest.fixture(scope="module")
def hostile_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("hostile-browser") / "home"
    db = hostile_serving(home)
    write_team_reports(db, home / "reports")
    yield from _start_streamlit(home, tmp_path_factory.mktemp("streamlit-hostile"))


@pytest.fixture(scope="module")
def tab() -> Iterator[object]:
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": WIDTH, "height": 1000})
        yield page
        browser.close()


def test_hostile_names_are_never_links(tab: object, hostile_url: str) -> None:
    texts = []
    for path, title in PAGES:
        tab.goto(f"{hostile_url}/{path}")
        tab.get_by_role("heading", name=title, exact=True).wait_for(timeout=60_000)
        tab.wait_for_selector(DONE, timeout=60_000)
        tab.wait_for_timeout(500)  # elements below a grid can arrive a moment after the script run ends
        assert tab.locator('[data-testid="stException"]').count() == 0, (path, tab.inner_text("body")[:2000])
        # Collapsed expanders keep their bodies in the document, so this sees root causes and check rows too.
        # Plotly draws links in its SVG as <a xlink:href>: both kinds are read.
        links = tab.eval_on_selector_all("a", "els => els.map(e => e.getAttribute('href') || "
                                              "e.getAttribute('xlink:href') || '')")
        assert not [h for h in links if "http://x" in h], (path, links)
        texts.append(tab.inner_text('[data-testid="stMain"]'))
    shown = "\n".join(texts)
    # Escaped Markdown shows the name itself, character for character (no stray backslashes).
    assert LINK_TEAM in shown and HTML_TEAM in shown
    assert PAYLOADS["ml-research"] in shown
    assert "\\" not in shown, shown[max(0, shown.find("\\") - 200):shown.find("\\") + 200]
