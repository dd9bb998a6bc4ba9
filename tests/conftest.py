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

SAMPLES = REPO / "samples" / "inputs"


def published_tables(serving: Path) -> dict[str, list[tuple]]:
    """Every published table's rows, sorted, except the per-run bookkeeping tables."""
    import duckdb

    con = duckdb.connect(str(serving), read_only=True)
    try:
        names = [r[0] for r in con.execute("select table_name from information_schema.tables").fetchall()]
        return {n: con.execute(f'select * from "{n}" order by all').fetchall()
                for n in sorted(names) if n not in ("publication", "check_results")}
    finally:
        con.close()


@pytest.fixture(scope="session")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One full refresh of the bundled sample inputs into a temporary home (shared by e2e tests)."""
    from pipelines.cli import execute_refresh

    home = tmp_path_factory.mktemp("sample_home")
    ok, run_id, reason = execute_refresh(home, SAMPLES)
    return {"home": home, "ok": ok, "run_id": run_id, "reason": reason}
