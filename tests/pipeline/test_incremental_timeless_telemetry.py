"""Telemetry without a time of its own (a Prometheus scrape with no timestamps) lands on its file's
landing day. When a later file rebuilds that day incrementally, the rows of the files landed on it
before are read again: int_gpu_telemetry_hourly names those files instead of scanning every sample
of the history for NULL times, and must not lose them."""
import shutil
from pathlib import Path

import duckdb
import pytest

from pipelines.cli import execute_refresh

pytestmark = pytest.mark.e2e

SCRAPE = Path(__file__).resolve().parents[2] / "samples" / "inputs" / "usage" / "dcgm_exporter_readme_scrape_docker.prom"
UUID_A = "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52"
UUID_B = "GPU-00000000-0000-0000-0000-00000000000b"


def _timeless_rows(db: Path) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "select * exclude (x_loaded_at) from intermediate.int_gpu_telemetry_hourly "
            "where time_from_landing order by all").fetchall()
        cols = [d[0] for d in con.description]
    finally:
        con.close()
    uuid = cols.index("gpu_uuid")
    out: dict[str, list[tuple]] = {}
    for row in rows:
        out.setdefault(row[uuid], []).append(row)
    return out


def test_a_later_timeless_file_keeps_the_rows_of_one_landed_before(tmp_path: Path) -> None:
    inputs, home = tmp_path / "inputs", tmp_path / "home"
    (inputs / "usage").mkdir(parents=True)
    shutil.copy(SCRAPE, inputs / "usage" / "scrape_a.prom")
    ok, _, reason = execute_refresh(home, inputs, docs=False)
    assert ok, reason
    first = _timeless_rows(home / "ledger.duckdb")
    assert list(first) == [UUID_A]

    # Another GPU's scrape, also without timestamps, lands later: its landing day is rebuilt.
    (inputs / "usage" / "scrape_b.prom").write_text(SCRAPE.read_text().replace(UUID_A, UUID_B))
    ok, _, reason = execute_refresh(home, inputs, docs=False)
    assert ok, reason
    second = _timeless_rows(home / "ledger.duckdb")
    assert sorted(second) == sorted([UUID_A, UUID_B])
    # scrape_a's rows are exactly what the first build made of them (their day was rebuilt, if the
    # two refreshes fell on one UTC day, or not touched otherwise)
    assert second[UUID_A] == first[UUID_A]
