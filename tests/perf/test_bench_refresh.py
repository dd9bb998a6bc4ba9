"""perf/bench_refresh.py helpers: the --sizes parser and the --next-day hold-back of the last day."""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

import pytest

SPEC = importlib.util.spec_from_file_location(
    "bench_refresh", Path(__file__).resolve().parents[2] / "perf" / "bench_refresh.py")
bench = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(bench)


def test_parse_sizes() -> None:
    assert bench.parse_sizes("64x7,256x30") == [(64, 7), (256, 30)]
    assert bench.parse_sizes(" 1000X30 ") == [(1000, 30)]
    with pytest.raises(argparse.ArgumentTypeError):
        bench.parse_sizes("64x7,x3")


def test_hold_back_last_day(tmp_path: Path) -> None:
    inputs = tmp_path / "inputs"
    names = ["usage/dcgm_2025-04-01.csv", "usage/dcgm_2025-04-02.csv", "usage/sacct_2025-04-02.txt",
             "api_spend/litellm_spend_logs_2025-04-02.csv", "api_spend/litellm_spend_logs_2025-04-01.csv",
             "billing/focus_2025-04.csv", "usage/dcgm_notes_2025-04-02.md", ".done"]
    for name in names:
        (inputs / name).parent.mkdir(parents=True, exist_ok=True)
        (inputs / name).write_text(name)
    held = bench.hold_back_last_day(inputs, tmp_path / "view")
    assert sorted(p.relative_to(inputs).as_posix() for p in held) == [
        "api_spend/litellm_spend_logs_2025-04-02.csv", "usage/dcgm_2025-04-02.csv", "usage/sacct_2025-04-02.txt"]
    view = sorted(p.relative_to(tmp_path / "view").as_posix() for p in (tmp_path / "view").rglob("*") if p.is_file())
    assert view == ["api_spend/litellm_spend_logs_2025-04-01.csv", "billing/focus_2025-04.csv",
                    "usage/dcgm_2025-04-01.csv", "usage/dcgm_notes_2025-04-02.md"]
    assert (tmp_path / "view" / "billing" / "focus_2025-04.csv").read_text() == "billing/focus_2025-04.csv"


def test_hold_back_days_holds_the_last_days_by_day(tmp_path: Path) -> None:
    """The consecutive-nights bench (perf/bench_nights.py) holds back the last two of three days: their
    per-day files grouped by day, oldest first; the view keeps day 1 and the files of no day."""
    from perf.refresh_homes import hold_back_days

    inputs = tmp_path / "inputs"
    for name in ["usage/dcgm_2025-04-01.csv", "usage/dcgm_2025-04-02.csv", "usage/sacct_2025-04-03.txt",
                 "usage/dcgm_2025-04-03.csv", "billing/focus_2025-04.csv"]:
        (inputs / name).parent.mkdir(parents=True, exist_ok=True)
        (inputs / name).write_text(name)
    held = hold_back_days(inputs, tmp_path / "view", 2)
    assert [(day, sorted(p.name for p in files)) for day, files in held] == [
        ("2025-04-02", ["dcgm_2025-04-02.csv"]), ("2025-04-03", ["dcgm_2025-04-03.csv", "sacct_2025-04-03.txt"])]
    view = sorted(p.relative_to(tmp_path / "view").as_posix() for p in (tmp_path / "view").rglob("*") if p.is_file())
    assert view == ["billing/focus_2025-04.csv", "usage/dcgm_2025-04-01.csv"]


def test_the_refused_input_gate_counts_the_runs_own_refusals(tmp_path: Path) -> None:
    import duckdb

    ledger = tmp_path / "ledger.duckdb"
    con = duckdb.connect(str(ledger))
    con.execute("create schema audit")
    con.execute("create table audit.file_loads (file_hash varchar, status varchar, run_id varchar)")
    # an earlier run refused two files (a full disk, say); the benchmarked run loaded one and refused one
    con.execute("insert into audit.file_loads values ('a', 'unreadable', 'r1'), ('b', 'unreadable', 'r1'), "
                "('c', 'loaded', 'r2'), ('d', 'unreadable', 'r2'), ('e', 'loaded', 'r3')")
    con.close()
    assert bench.refused_inputs(ledger, "r1") == 2
    assert bench.refused_inputs(ledger, "r2") == 1
    assert bench.refused_inputs(ledger, "r3") == 0  # the earlier refusals no longer flag a clean run
