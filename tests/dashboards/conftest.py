"""Fixtures: hand-written serving.duckdb publications in a temporary GPU_LEDGER_HOME."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dashboards.serving_fixture import build_serving


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    """A home with every table published (today's and the ones that land later)."""
    build_serving(tmp_path / "home")
    return tmp_path / "home"


@pytest.fixture()
def serving_db(home: Path) -> Path:
    return home / "serving.duckdb"


@pytest.fixture()
def minimal_serving(tmp_path: Path) -> Path:
    """Only what the refresh publishes today: ledger, chargeback without budgets, checks, rejects."""
    return build_serving(tmp_path / "minimal", minimal=True)
