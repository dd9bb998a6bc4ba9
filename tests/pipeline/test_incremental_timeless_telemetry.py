"""Telemetry without a time of its own (a Prometheus scrape with no timestamps) lands on its file's
landing day. When a later file rebuilds that day incrementally, the rows of the files landed on it
before are read again: int_gpu_telemetry_hourly names those files instead of scanning every sample
of the history for NULL times, and must not lose them.

Read from the incremental refreshes of tests/pipeline/test_incremental.py: the first lands one GPU's
scrape, the second (incremental) another GPU's, with the fleet's day 3 and a restated day 1."""
from pathlib import Path

import duckdb
import pytest

from tests import prefetch

pytestmark = pytest.mark.e2e

SCRAPE = Path(__file__).resolve().parents[2] / "samples" / "inputs" / "usage" / "dcgm_exporter_readme_scrape_docker.prom"
UUID_A = "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52"
UUID_B = "GPU-00000000-0000-0000-0000-00000000000b"


def timeless_rows(db: Path) -> dict[str, list[tuple]]:
    """int_gpu_telemetry_hourly's rows timed by their file's landing, per GPU uuid, without the watermark and
    the build stamp (a day rebuilt with the same rows is stamped anew)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "select * exclude (x_loaded_at, x_built_at) from intermediate.int_gpu_telemetry_hourly "
            "where time_from_landing order by all").fetchall()
        cols = [d[0] for d in con.description]
    finally:
        con.close()
    uuid = cols.index("gpu_uuid")
    out: dict[str, list[tuple]] = {}
    for row in rows:
        out.setdefault(row[uuid], []).append(row)
    return out


@pytest.fixture(scope="module")
def refreshes(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("incremental", tmp_path_factory)


def test_a_later_timeless_file_keeps_the_rows_of_one_landed_before(refreshes: dict) -> None:
    first = refreshes["first_timeless"]
    assert list(first) == [UUID_A]
    # Another GPU's scrape, also without timestamps, lands later: its landing day is rebuilt.
    second = refreshes["second_timeless"]
    assert sorted(second) == sorted([UUID_A, UUID_B])
    # scrape_a's rows are exactly what the first build made of them (their day was rebuilt, if the
    # two refreshes fell on one UTC day, or not touched otherwise)
    assert second[UUID_A] == first[UUID_A]
