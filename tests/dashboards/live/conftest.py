"""Browser tests on the real sample publication: the session's sample home (instead of the hand-written
fixture home of tests/dashboards), a Streamlit server on it per module, and one 1440 x 1000 chromium tab
per module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dashboards.test_browser import CHROMIUM, CHROMIUM_ARGS, _start_streamlit

WIDTH, HEIGHT = 1440, 1000


@pytest.fixture(scope="module")
def home(sample_run: dict) -> Path:
    assert sample_run["ok"], sample_run["reason"]
    return Path(sample_run["home"])


@pytest.fixture(scope="module")
def app_url(home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _start_streamlit(home, tmp_path_factory.mktemp("streamlit-sample"))


@pytest.fixture(scope="module")
def page() -> Iterator[object]:
    from playwright import sync_api
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        browser.close()
