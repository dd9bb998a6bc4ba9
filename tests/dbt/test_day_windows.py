"""A full build of int_gpu_usage_hourly in windows of days equals the one-statement build
(dbt/macros/day_windows.sql).

On copies of the sample ledger (usage from 2023 to 2026, with gaps of months between days), the model
is rebuilt with `--full-refresh` once as one statement (`GPU_LEDGER_BUILD_WINDOW_DAYS=0`) and once in windows of
one day with data (dozens of windows, the first open below and the last open above). Every row but
the build stamp must be the same, none lost or doubled. Then the windowed copy's stored history key
is made stale, so an incremental run rebuilds every day (pre-hook delete, then the windows inserted
into the existing table): the rows are again the one-statement build's.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from tests.dbt.ledger_nodes import copy_ledger, run_model

MODEL = "int_gpu_usage_hourly"


def _build(ledger: Path, window_days: int, *extra: str) -> str:
    """`dbt run` of the model (one invocation) in windows of `window_days` days with data (the macro's
    environment setting: a var would make dbt parse the whole project again); its log text."""
    return run_model(ledger, MODEL, *extra, env={"GPU_LEDGER_BUILD_WINDOW_DAYS": str(window_days)})


def _rows(ledger: Path) -> list[tuple]:
    """The model's rows, every column but the build stamp, sorted."""
    con = duckdb.connect(str(ledger), read_only=True)
    try:
        cols = [r[0] for r in con.execute(
            "select column_name from information_schema.columns where table_schema = 'intermediate' "
            "and table_name = ? and column_name <> 'x_built_at' order by column_name", [MODEL]).fetchall()]
        return con.execute(f"select {', '.join(cols)} from intermediate.{MODEL} order by all").fetchall()
    finally:
        con.close()


def _windows(log: str) -> int:
    found = re.search(rf"{MODEL}: built in (\d+) windows", log)
    return int(found.group(1)) if found else 0


@pytest.fixture(scope="module")
def one_statement(sample_run: dict, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple]]:
    """The sample ledger's model rebuilt in one statement, and its rows."""
    assert sample_run["ok"], sample_run["reason"]
    tmp = tmp_path_factory.mktemp("one_window")
    ledger = copy_ledger(sample_run["home"], tmp / "one", raw=True)
    log = _build(ledger, 0, "--full-refresh")
    assert _windows(log) == 0, log[-2000:]
    return tmp, _rows(ledger)


def test_windowed_builds_equal_one_statement(one_statement: tuple[Path, list[tuple]], sample_run: dict) -> None:
    tmp, expected = one_statement
    assert len(expected) > 100  # the samples' GPU-hours: something to lose or double
    ledger = copy_ledger(sample_run["home"], tmp / "many", raw=True)

    log = _build(ledger, 1, "--full-refresh")
    # one window per day with data, plus the open one below the first boundary: the samples hold
    # usage on more than ten separate days
    assert _windows(log) > 10, log[-2000:]
    assert _rows(ledger) == expected

    con = duckdb.connect(str(ledger))
    try:
        con.execute(f"update intermediate.{MODEL} set x_history_key = 'stale'")
    finally:
        con.close()
    log = _build(ledger, 3)  # incremental: every day rebuilt, in windows of three days with data
    assert "history-wide inputs changed" in log and _windows(log) > 3, log[-2000:]
    assert _rows(ledger) == expected
