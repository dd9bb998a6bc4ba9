"""The one-page decision record on the built sample home: it names the best eligible candidate and its
saving exactly as fct_candidate_comparison has them, stays short, never presents a costlier route as the
choice, keeps today's setup when nothing is eligible, and `decide --all` writes one record per workload."""

from __future__ import annotations

import json
import shutil
from datetime import date
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from reporting.decisions import write_decision_record
from reporting.formatting import fmt_money, fmt_unit_cost
from reporting.safe_text import md_text
from tests.conftest import copy_home

CHAT = "chat-assistant-70b"
DAY = date(2025, 5, 1)


def _mart(serving: Path, where: str, *params: object) -> list[dict]:
    con = duckdb.connect(str(serving), read_only=True)
    try:
        cur = con.execute(f"select * from fct_candidate_comparison where {where}", list(params))
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]
    finally:
        con.close()


@pytest.fixture()
def serving_copy(sample_run: dict, tmp_path: Path) -> Path:
    """A private copy of the sample publication to alter (the shared home is never written)."""
    assert sample_run["ok"], sample_run["reason"]
    target = tmp_path / "serving.duckdb"
    shutil.copy(Path(sample_run["home"]) / "serving.duckdb", target)
    return target


def test_one_page_names_the_best_eligible_candidate_and_its_saving(sample_run: dict, tmp_path: Path) -> None:
    assert sample_run["ok"], sample_run["reason"]
    serving = Path(sample_run["home"]) / "serving.duckdb"
    md, js = write_decision_record(serving, tmp_path, CHAT, DAY)
    text = md.read_text()
    best, = _mart(serving, "workload_id = ? and status = 'eligible' and rank = 1", CHAT)
    today, = _mart(serving, "workload_id = ? and route_kind = 'current'", CHAT)
    cur = best["currency"]
    assert len(text.splitlines()) < 60
    assert f"**Switch to {md_text(best['candidate'])}.**" in text
    assert fmt_money(best["monthly_savings"], cur) in text and fmt_money(best["monthly_cost"], cur) in text
    assert fmt_money(today["monthly_cost"], cur) in text  # today's run-rate at the same demand
    assert fmt_unit_cost(best["monthly_savings"] / best["accepted_outputs"], cur) in text  # saving per output
    assert f"Evidence grade: {md_text(best['evidence'])}" in text
    if best["evidence_to_run"]:
        assert md_text(best["evidence_to_run"]) in text
    backtest, = _mart(serving, "workload_id = ? and route_kind = 'today_shape'", CHAT)
    assert f"{backtest['backtest_gap_pct']:+.1f} %" in text and "Back-test" in text
    table = [line for line in text.splitlines() if line.startswith("| ") and "Rank" not in line]
    assert 2 <= len(table) <= 8
    for line in text.splitlines():
        assert not ("chosen" in line.lower() and "costs more" in line)
        assert not ("costs more" in line and ("Switch to" in line or "recommend" in line.lower()))
    appendix = md.with_name(f"{DAY:%Y-%m-%d}.appendix.md")
    assert "## Computed" in appendix.read_text() and appendix.name in text
    rec = json.loads(js.read_text())
    assert rec["chosen"] == best["candidate"] and Decimal(rec["chosen_row"]["monthly_savings"]) == best["monthly_savings"]
    assert "computed_full" not in rec


def test_nothing_eligible_keeps_today_and_names_the_cheapest_pending_route(serving_copy: Path, tmp_path: Path) -> None:
    """Every eligible route turned into 'eligible pending evidence', and a costlier route carrying a stray
    eligible flag and rank 1: the page keeps today's setup and never names the costlier route as the choice."""
    con = duckdb.connect(str(serving_copy))
    con.execute("update fct_candidate_comparison set status = 'eligible pending evidence', eligible = false, "
                "rank = null where workload_id = ? and status = 'eligible'", [CHAT])
    costlier = con.execute("select candidate from fct_candidate_comparison where workload_id = ? and "
                           "status = 'costs more' order by monthly_cost limit 1", [CHAT]).fetchone()
    if costlier:
        con.execute("update fct_candidate_comparison set eligible = true, rank = 1 where workload_id = ? "
                    "and candidate = ?", [CHAT, costlier[0]])
    con.close()
    md, js = write_decision_record(serving_copy, tmp_path, CHAT, DAY)
    text, rec = md.read_text(), json.loads(js.read_text())
    pending = min(_mart(serving_copy, "workload_id = ? and status = 'eligible pending evidence' "
                                      "and monthly_savings > 0", CHAT), key=lambda r: r["monthly_cost"])
    assert rec["chosen"] is None and "Switch to" not in text
    assert "**Keep today's setup**" in text and "no eligible candidate" in rec["decision"]
    paragraph = text.split("## Recommendation", 1)[1].split("## Candidates", 1)[0]
    assert md_text(pending["candidate"]) in paragraph
    assert fmt_money(pending["monthly_savings"], pending["currency"]) in paragraph
    assert md_text(pending["evidence_to_run"]) in paragraph
    if costlier:
        assert md_text(costlier[0]) not in paragraph


def test_names_are_escaped_on_the_page(serving_copy: Path, tmp_path: Path) -> None:
    evil = "=HYPERLINK(\"http://x\") [click](http://evil) <b>|"
    con = duckdb.connect(str(serving_copy))
    con.execute("update fct_candidate_comparison set candidate = ? where workload_id = ? and rank = 1", [evil, CHAT])
    con.close()
    md, _ = write_decision_record(serving_copy, tmp_path, CHAT, DAY)
    text = md.read_text()
    assert md_text(evil) in text and evil not in text and "](http://evil)" not in text


def test_decide_all_writes_one_record_per_workload_and_an_index(sample_run: dict, tmp_path: Path) -> None:
    from pipelines.cli import app

    assert sample_run["ok"], sample_run["reason"]
    home = copy_home(Path(sample_run["home"]), tmp_path / "home", "decisions")
    result = CliRunner().invoke(app, ["decide", "--all", "--home", str(home)])
    assert result.exit_code == 0, result.output
    con = duckdb.connect(str(home / "serving.duckdb"), read_only=True)
    workloads = sorted(r[0] for r in con.execute("select workload_id from dim_workload").fetchall())
    con.close()
    decisions = home / "decisions"
    pages = sorted(p for p in decisions.glob("*/*.md") if not p.name.endswith(".appendix.md"))
    assert sorted(p.parent.name for p in pages) == workloads
    for p in pages:
        assert p.with_suffix(".json").exists() and p.with_name(p.stem + ".appendix.md").exists()
        assert len(p.read_text().splitlines()) < 60
    index, = decisions.glob("index-*.md")
    assert all(md_text(w) in index.read_text() for w in workloads)
    assert CliRunner().invoke(app, ["decide", "--home", str(home)]).exit_code == 2  # neither --workload nor --all
