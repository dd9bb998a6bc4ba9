"""Decision records: the chosen candidate is the best-ranked eligible one (never a costlier route); a workload the registry knows
always gets a record that states what is missing; only an unknown workload fails clearly."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from reporting.decisions import DecisionDataMissing, write_decision_record


def test_record_chooses_best_candidate_meeting_slo(serving_db: Path, tmp_path: Path) -> None:
    md, js = write_decision_record(serving_db, tmp_path, "wl-serve", date(2025, 3, 1))
    assert (md, js) == (tmp_path / "wl-serve" / "2025-03-01.md", tmp_path / "wl-serve" / "2025-03-01.json")
    rec = json.loads(js.read_text())
    assert rec["chosen"] == "coreweave-l40s"  # api-route ranks 1 but misses the SLO
    assert rec["registry_entry"]["unit_of_success"] == "accepted response"
    assert Decimal(rec["acceptance_criteria"]["slo"]["slo_p95_latency_ms"]) == 300
    assert [c["candidate"] for c in rec["candidate_inputs"]] == ["api-route", "coreweave-l40s", "aws-h100"]
    assert Decimal(rec["candidate_inputs"][1]["gpu_cost"]) == Decimal(1800)
    assert rec["candidate_inputs"][1]["gpu_count"] == 2
    assert rec["publication"]["run_id"] == "run-fixture-0042"
    assert len(rec["capacity_options"]) == 3 and len(rec["memory_fit"]) == 2
    text = md.read_text()
    assert "**Switch to coreweave-l40s.**" in text and "Chosen" not in text
    appendix = (tmp_path / "wl-serve" / "2025-03-01.appendix.md").read_text()
    assert "## Acceptance criteria" in appendix
    assert "| api-route | api |" in appendix  # candidate, route_kind, then evidence and provider


def test_no_candidate_meeting_slo_chooses_nothing(serving_db: Path, tmp_path: Path) -> None:
    con = duckdb.connect(str(serving_db))
    con.execute("update fct_candidate_comparison set meets_slo = false")
    con.close()
    md, js = write_decision_record(serving_db, tmp_path, "wl-serve", date(2025, 3, 1))
    assert json.loads(js.read_text())["chosen"] is None
    assert "**Keep today's setup**" in md.read_text()
    appendix = (tmp_path / "wl-serve" / "2025-03-01.appendix.md").read_text()
    assert "## Missing" in appendix and "## Today" in appendix


def test_missing_tables_raise_a_clear_error(minimal_serving: Path, tmp_path: Path) -> None:
    with pytest.raises(DecisionDataMissing, match="fct_candidate_comparison is not published"):
        write_decision_record(minimal_serving, tmp_path / "out", "wl-serve")
    assert not (tmp_path / "out").exists()


def test_unknown_workload_raises(serving_db: Path, tmp_path: Path) -> None:
    with pytest.raises(DecisionDataMissing, match="no candidates for it and the registry has no entry"):
        write_decision_record(serving_db, tmp_path, "no-such-workload")


def test_registered_workload_without_candidates_gets_a_record_stating_what_is_missing(
        serving_db: Path, tmp_path: Path) -> None:
    """wl-train is in the registry but has no candidate row: a record, not DecisionDataMissing."""
    md, js = write_decision_record(serving_db, tmp_path, "wl-train", date(2025, 3, 1))
    rec = json.loads(js.read_text())
    assert rec["chosen"] is None and rec["registry_entry"]["workload_type"] == "full fine-tune"
    assert "fct_candidate_comparison has no rows for this workload" in rec["missing"]
    assert "no eligible candidate" in rec["decision"]
    assert "**Keep today's setup**" in md.read_text()
    assert "## Missing" in md.with_name("2025-03-01.appendix.md").read_text()


def test_eligible_column_wins_over_meets_slo_and_rows_that_are_not_candidates_are_never_chosen(
        serving_db: Path, tmp_path: Path) -> None:
    """A new publication: the gates (eligible) decide, the 'current' row (today) is a baseline only."""
    con = duckdb.connect(str(serving_db))
    con.execute("alter table fct_candidate_comparison add column eligible boolean")
    con.execute("update fct_candidate_comparison set eligible = candidate = 'aws-h100', rank = case "
                "when candidate = 'aws-h100' then 1 end")
    con.execute("update fct_candidate_comparison set route_kind = 'current', eligible = true, rank = 0 "
                "where candidate = 'api-route'")
    con.close()
    _, js = write_decision_record(serving_db, tmp_path, "wl-serve", date(2025, 3, 1))
    rec = json.loads(js.read_text())
    assert rec["chosen"] == "aws-h100"
    assert rec["today"]["candidate"] == "api-route"
    assert any("Memory gate" in r for r in rec["acceptance_criteria"]["rules"])


def test_workload_id_cannot_escape_out_dir(serving_db: Path, tmp_path: Path) -> None:
    con = duckdb.connect(str(serving_db))
    con.execute("update fct_candidate_comparison set workload_id = '../../evil'")
    con.close()
    md, _ = write_decision_record(serving_db, tmp_path / "out", "../../evil", date(2025, 3, 1))
    assert md.resolve().is_relative_to((tmp_path / "out").resolve())
