"""Browser tests on the real sample publication: the session's sample home (instead of the hand-written
fixture home of tests/dashboards), one Streamlit server on it and one chromium for this folder's modules,
and a 1440 x 1000 tab of its own per module (a new tab is a new Streamlit session: the sidebar's choices
of one module do not reach the next)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dashboards.test_browser import CHROMIUM, CHROMIUM_ARGS, _start_streamlit

WIDTH, HEIGHT = 1440, 1000


@pytest.fixture(scope="package")
def home(sample_run: dict) -> Path:
    assert sample_run["ok"], sample_run["reason"]
    return Path(sample_run["home"])


@pytest.fixture(scope="package")
def app_url(home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # Stopped (and its log checked for tracebacks) after the last module of the folder.
    yield from _start_streamlit(home, tmp_path_factory.mktemp("streamlit-sample"))


@pytest.fixture(scope="package")
def browser() -> Iterator[object]:
    from playwright import sync_api
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def page(browser: object) -> Iterator[object]:
    tab = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    yield tab
    tab.close()
