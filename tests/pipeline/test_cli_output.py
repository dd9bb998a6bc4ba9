"""What the command line prints when nothing matches, and how wide: a month that selects nothing says so and
exits non-zero; output without a terminal is not wrapped at 80 columns; a rejected file keeps its whole name;
`status` says what day the charges run through."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.dashboards.serving_fixture import build_serving
from warehouse.home import Home
from warehouse.status import write_status

REPO = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess:
    """The installed command as a user runs it, its output piped (no terminal) and no COLUMNS set."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return subprocess.run([sys.executable, "-m", "pipelines.cli", *args], cwd=REPO, env=env, capture_output=True, check=False,
                          text=True, timeout=120)


@pytest.fixture()
def published(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    build_serving(home)
    con = duckdb.connect(str(home / "serving.duckdb"))
    con.execute("create table fct_focus_export as select * from ledger_focus")  # what `export focus` reads
    con.close()
    write_status(home, True, "run-fixture-0042", "refreshed")
    return home


def test_report_for_a_month_without_cost_says_so(published: Path) -> None:
    result = _cli("report", "--home", str(published), "--month", "2030-01")
    assert result.returncode == 1, result.stdout
    assert "--month 2030-01: any team has no cost in that month, so no report was written" in result.stdout
    assert "months published: 2025-01, 2025-02" in result.stdout
    assert not (published / "reports").exists() or not list((published / "reports").rglob("*.html"))


def test_export_for_a_month_without_lines_says_so(published: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = _cli("export", "focus", "--home", str(published), "--out", str(out), "--month", "2030-01")
    assert result.returncode == 1, result.stdout
    assert "no ledger line in that billing period, so nothing was exported" in result.stdout
    assert "periods published: 2025-01, 2025-02" in result.stdout
    assert not out.exists() or not list(out.iterdir())


def test_status_is_not_wrapped_and_says_how_far_charges_go(published: Path) -> None:
    result = _cli("status", "--home", str(published))
    assert result.returncode == 0, result.stdout + result.stderr
    # The fixture's ledger has charge period starts only (latest 2025-02-01) and its API spend is on 2025-02-03:
    # the charges run through 2025-02-03, whatever the publication time (2025-02-28 06:00).
    assert "charges through 2025-02-03" in result.stdout
    lines = result.stdout.splitlines()
    assert max(map(len, lines)) > 80, lines  # rich's 80-column default would have wrapped these
    assert any("Invoice" in ln and "Chargeback" in ln and "All-in showback" in ln for ln in lines)


def test_rejects_prints_whole_file_names(tmp_path: Path) -> None:
    home = Home(tmp_path / "home").ensure()
    name = "billing/2025/04/" + "very-long-provider-export-name-" * 3 + "part-0001.csv"  # 122 characters
    con = duckdb.connect(str(home.ledger_db))
    con.execute("create schema audit")
    con.execute("create table audit.dq_rejects (source_family varchar, file_name varchar, line bigint, rule varchar,"
                " column_name varchar, value varchar, message varchar)")
    con.execute("insert into audit.dq_rejects values ('billing', ?, 7, 'not_a_number', 'BilledCost', 'abc', "
                "'BilledCost is not a number')", [name])
    con.close()
    result = _cli("rejects", "--home", str(home.root))
    assert result.returncode == 0, result.stdout
    assert name in result.stdout and "…" not in result.stdout
