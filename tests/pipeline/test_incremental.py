"""Incremental nightly: adding a day or restating one rebuilds only those days, and the
result equals a full rebuild of the same inputs. Three refreshes of one small generated fleet:

1. DCGM telemetry of days 1-2 (every other file of the 3-day fleet is there from the start, so day 2's
   published numbers can only move if day 2 is wrongly reprocessed; no Slurm files: a job's own
   accounted utilisation would stand in front of the telemetry whose restatement is tested), and a
   scrape without timestamps;
2. incremental: day 3's DCGM file arrives and day 1's is restated (new bytes, higher utilisation), and
   another GPU's scrape without timestamps (tests/pipeline/test_incremental_timeless_telemetry.py);
3. `--full-refresh` on the same inputs.
"""

import csv
import io
import math
import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from pipelines.cli import execute_refresh
from tests import prefetch
from tests.conftest import published_tables
from tests.pipeline.test_incremental_timeless_telemetry import SCRAPE, UUID_A, UUID_B, timeless_rows
from tools.generate import generate

pytestmark = pytest.mark.e2e

DAY1, DAY2, DAY3 = "2025-04-01", "2025-04-02", "2025-04-03"


def _restate(path: Path) -> None:
    """Rewrite a DCGM CSV with GR_ENGINE_ACTIVE raised by 0.25 (capped at 1): a corrected export."""
    rows = list(csv.reader(io.StringIO(path.read_text())))
    col = rows[0].index("DCGM_FI_PROF_GR_ENGINE_ACTIVE")
    for row in rows[1:]:
        if row[col]:
            row[col] = f"{min(1.0, float(row[col]) + 0.25):.4f}"
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    path.write_text(out.getvalue())


def _per_day(serving: Path) -> dict:
    con = duckdb.connect(str(serving), read_only=True)
    try:
        return {str(d): (alloc, used) for d, alloc, used in con.execute(
            "select day, round(sum(allocated_gpu_hours), 9), round(sum(used_gpu_hours), 9) "
            "from fct_gpu_utilisation_daily group by day").fetchall()}
    finally:
        con.close()


def _hourly(db: Path, day: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(
            "select * exclude (x_loaded_at) from intermediate.int_gpu_telemetry_hourly "
            "where sample_date = ?::date order by all", [day]).fetchall()
    finally:
        con.close()


def _same(a: object, b: object) -> bool:
    """Equal, floats to 1e-9 relative: sums of doubles depend on row order, which differs between an
    incremental and a full build. DECIMALs to 1e-7: GPU-hours come from double utilisation averages
    whose last bits depend on that order, each hour is rounded to 9 decimals, and a day adds 24 of
    them (so up to 24 x 1e-9 apart; seen: 107.096862748 vs .750), then prices multiply them. 1e-7
    is still far below a cent; a missing or doubled hour, row or day is off by whole units."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, Decimal) and isinstance(b, Decimal):
        return abs(a - b) <= Decimal("1e-7")
    return a == b


def assert_same_rows(a: list[tuple], b: list[tuple], what: str) -> None:
    """The same rows in the same order, each value `_same`; names the first three that differ."""
    assert len(a) == len(b), f"{what}: {len(a)} rows against {len(b)}"
    bad = [(x, y) for x, y in zip(a, b, strict=True)
           if len(x) != len(y) or not all(_same(u, v) for u, v in zip(x, y, strict=True))]
    assert not bad, (what, bad[:3])


def assert_same_tables(incremental: dict[str, list[tuple]], full: dict[str, list[tuple]]) -> None:
    """Two publications (table -> sorted rows) hold the same tables and rows: an incremental build's
    and a full build's of the same inputs."""
    assert sorted(incremental) == sorted(full)
    for table in sorted(full):
        assert_same_rows(incremental[table], full[table], f"{table} (incremental against full)")


def build_refreshes(base: Path) -> dict:
    """The three refreshes, in order (a tests/prefetch.py job)."""
    fleet = base / "fleet"
    generate(fleet, gpus=8, days=3, teams=2, seed=1)
    inputs, home = base / "inputs", base / "home"
    shutil.copytree(fleet, inputs)
    (inputs / "usage" / f"dcgm_{DAY3}.csv").unlink()
    for sacct in (inputs / "usage").glob("sacct_*.txt"):
        sacct.unlink()
    # a scrape without timestamps now, another GPU's next time (test_incremental_timeless_telemetry.py)
    shutil.copy(SCRAPE, inputs / "usage" / "scrape_a.prom")
    seen: dict = {"home": home}

    ok, _, reason = execute_refresh(home, inputs, docs=False)
    assert ok, reason
    seen["first"] = _per_day(home / "serving.duckdb")
    seen["first_hourly"] = {d: _hourly(home / "ledger.duckdb", d) for d in (DAY1, DAY2)}
    seen["first_timeless"] = timeless_rows(home / "ledger.duckdb")

    shutil.copy(fleet / "usage" / f"dcgm_{DAY3}.csv", inputs / "usage")
    _restate(inputs / "usage" / f"dcgm_{DAY1}.csv")
    (inputs / "usage" / "scrape_b.prom").write_text(SCRAPE.read_text().replace(UUID_A, UUID_B))
    ok, _, reason = execute_refresh(home, inputs, docs=False)
    assert ok, reason
    seen["second"] = _per_day(home / "serving.duckdb")
    seen["second_hourly"] = {d: _hourly(home / "ledger.duckdb", d) for d in (DAY1, DAY2)}
    seen["second_timeless"] = timeless_rows(home / "ledger.duckdb")
    seen["incremental"] = published_tables(home / "serving.duckdb")
    con = duckdb.connect(str(home / "ledger.duckdb"), read_only=True)
    try:
        # the days of the samples' own times (the scrapes' rows sit on their landing day)
        seen["telemetry_days"] = [str(r[0]) for r in con.execute(
            "select distinct sample_date from intermediate.int_gpu_telemetry_hourly where not time_from_landing "
            "order by 1").fetchall()]
    finally:
        con.close()

    ok, _, reason = execute_refresh(home, inputs, full_refresh=True, docs=False)
    assert ok, reason
    seen["full"] = published_tables(home / "serving.duckdb")
    con = duckdb.connect(str(home / "ledger.duckdb"), read_only=True)
    try:
        seen["backups"] = [r[0] for r in con.execute(
            "select table_schema || '.' || table_name from information_schema.tables "
            "where table_name like '%dbt_backup%' or table_name like '%dbt_tmp%'").fetchall()]
    finally:
        con.close()
    return seen


@pytest.fixture(scope="module")
def refreshes(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("incremental", tmp_path_factory)


def test_first_refresh_holds_the_first_two_days_of_telemetry(refreshes: dict) -> None:
    assert [d for d, _ in sorted(refreshes["first_hourly"].items()) if refreshes["first_hourly"][d]] == [DAY1, DAY2]


def test_a_new_day_is_added_incrementally(refreshes: dict) -> None:
    assert refreshes["telemetry_days"] == [DAY1, DAY2, DAY3]
    assert refreshes["second"][DAY3][0] > 0


def test_a_restated_day_is_reprocessed_and_the_others_are_not(refreshes: dict) -> None:
    first, second = refreshes["first"], refreshes["second"]
    assert second[DAY1] != first[DAY1], "day 1 was restated: its published GPU-hours must change"
    assert second[DAY1][1] > first[DAY1][1], "the restated export has higher utilisation"
    assert second[DAY2] == first[DAY2]
    assert refreshes["second_hourly"][DAY1] != refreshes["first_hourly"][DAY1]
    assert refreshes["second_hourly"][DAY2] == refreshes["first_hourly"][DAY2]


def test_incremental_tables_equal_a_full_rebuild(refreshes: dict) -> None:
    assert_same_tables(refreshes["incremental"], refreshes["full"])


def test_a_full_rebuild_leaves_no_copy_of_an_incremental_model(refreshes: dict) -> None:
    # dbt-duckdb renames the old table to <model>__dbt_backup and its drop was rolled back: every full
    # rebuild kept a second copy of each incremental model (on-run-end drop_backup_relations removes them).
    assert refreshes["backups"] == []
