"""Shared fixtures: paths to the real public samples and the repository root."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PUBLIC_DATA = (REPO.parent / "shared" / "data" / "public").resolve()


@pytest.fixture(scope="session")
def public_data() -> Path:
    """`../shared/data/public`: the real sample files every parser is tested on."""
    assert PUBLIC_DATA.is_dir(), f"real samples missing at {PUBLIC_DATA}"
    return PUBLIC_DATA
