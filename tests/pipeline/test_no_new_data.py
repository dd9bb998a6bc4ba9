"""A refresh with nothing new ends in seconds and publishes nothing; new bytes rebuild.

On a copy of the shared first refresh (registry + FOCUS sample + invoice_totals.csv, tests/conftest.py
`build_focus_home`), with a copy of its inputs that this module alters:
1. the same inputs again: "no new data since run <first>", serving.duckdb untouched, no Dagster run;
2. one input touched (new mtime, same bytes): hashed again, still no new data (landing is by content);
3. `--full-refresh` on the same inputs: rebuilt and published, the same numbers as the first refresh;
4. a new file (DCGM telemetry of the samples): rebuilt and published;
5. that file restated in place (new bytes, same name): rebuilt and published; then no new data again.
"""

from __future__ import annotations

import csv
import os
import shutil
import time
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from pipelines.cli import app, execute_refresh
from pipelines.refresh_state import RefreshState, current_state, enabled_fetches
from tests import prefetch
from tests.conftest import SAMPLES, copy_home, published_tables
from warehouse.status import read_status

pytestmark = pytest.mark.e2e
DCGM = SAMPLES / "usage" / "dcgm_chat70b_2025-04_constructed.csv"


def _publication(home: Path) -> tuple[str, object, int]:
    """(run id, published_at, file mtime_ns) of the home's serving copy."""
    serving = home / "serving.duckdb"
    con = duckdb.connect(str(serving), read_only=True)
    try:
        run_id, at = con.execute("select run_id, published_at from publication").fetchone()
    finally:
        con.close()
    return run_id, at, serving.stat().st_mtime_ns


def _runs(home: Path) -> int:
    return len(list((home / "logs").glob("run-*.log")))


def _refresh(home: Path, inputs: Path, **kw: object) -> dict:
    began = time.monotonic()
    ok, run_id, reason = execute_refresh(home, inputs, docs=False, **kw)
    return {"ok": ok, "run_id": run_id, "reason": reason, "seconds": time.monotonic() - began,
            "publication": _publication(home), "runs": _runs(home), "status": read_status(home)}


def build_sequence(root: Path, focus_home: dict) -> dict:
    """The refreshes this module checks, one after another on a copy of the shared first-refresh home
    (a tests/prefetch.py job, after `focus_home`)."""
    assert focus_home["ok"], focus_home["reason"]
    home = copy_home(focus_home["home"], root / "home")
    inputs = root / "inputs"
    shutil.copytree(focus_home["inputs"], inputs)  # other paths, same bytes: the same inputs
    seen = {"first": {"run_id": focus_home["run_id"], "publication": _publication(home), "runs": _runs(home)}}
    seen["same"] = _refresh(home, inputs)
    seen["status_cli"] = CliRunner().invoke(app, ["status", "--home", str(home)], env={"COLUMNS": "400"}).output
    invoice = inputs / "billing" / "invoice_totals.csv"
    os.utime(invoice, ns=(time.time_ns(), time.time_ns()))
    seen["touched"] = _refresh(home, inputs)
    seen["full"] = _refresh(home, inputs, full_refresh=True)
    seen["full_tables"] = published_tables(home / "serving.duckdb")
    (inputs / "usage").mkdir()
    shutil.copy(DCGM, inputs / "usage" / DCGM.name)
    seen["new_file"] = _refresh(home, inputs)
    with open(inputs / "usage" / DCGM.name, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    col = rows[0].index("DCGM_FI_PROF_GR_ENGINE_ACTIVE")
    rows[1][col] = f"{float(rows[1][col]) + 0.25:.4f}"  # a corrected export: one sample restated
    with open(inputs / "usage" / DCGM.name, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    seen["altered"] = _refresh(home, inputs)
    seen["after_altered"] = _refresh(home, inputs)
    return seen


@pytest.fixture(scope="module")
def nothing_new(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("no_new_data", tmp_path_factory)


def test_the_same_inputs_again_rebuild_and_publish_nothing(nothing_new: dict) -> None:
    first, same = nothing_new["first"], nothing_new["same"]
    assert same["ok"], same["reason"]
    assert same["run_id"] == first["run_id"]  # the run whose publication is in place
    assert same["publication"] == first["publication"]  # same run id, time and file: nothing published
    assert same["runs"] == first["runs"]  # no run log: Dagster never started
    status = same["status"]
    assert status["no_new_data"] is True and status["ok"] is True
    assert status["message"].startswith(f"no new data since run {first['run_id']} (")
    # Bound with room for a loaded shared machine; the work itself is ~1 s (stat + hash-cache lookups).
    assert same["seconds"] < 15, same["seconds"]


def test_status_says_no_new_data(nothing_new: dict) -> None:
    out = nothing_new["status_cli"]
    assert f"no new data since run {nothing_new['first']['run_id']}" in out, out
    assert f"publication: run {nothing_new['first']['run_id']}" in out, out
    # the refresh that found nothing started no run: status does not name one as its own
    finished = next(line for line in out.splitlines() if line.startswith("last finished refresh"))
    assert "(run " not in finished.split(": no new data")[0], finished


def test_a_touched_file_with_the_same_bytes_is_no_new_data(nothing_new: dict) -> None:
    touched = nothing_new["touched"]
    assert touched["ok"] and touched["status"]["no_new_data"]
    assert touched["publication"] == nothing_new["first"]["publication"]


def test_full_refresh_rebuilds_without_new_data(nothing_new: dict) -> None:
    full = nothing_new["full"]
    assert full["ok"], full["reason"]
    assert full["run_id"] != nothing_new["first"]["run_id"] and full["publication"][0] == full["run_id"]
    assert full["runs"] == nothing_new["first"]["runs"] + 1
    assert full["status"]["message"] == "published" and "no_new_data" not in full["status"]


def test_the_full_rebuild_publishes_identical_numbers(focus_home: dict, nothing_new: dict) -> None:
    """The second build of the same inputs (in full, on a copy of the first's home) publishes every table
    exactly as the first refresh did: the rebuild is deterministic."""
    assert focus_home["ok"] and nothing_new["full"]["ok"]
    first, second = focus_home["tables"], nothing_new["full_tables"]
    assert first == second
    assert len(first["ledger_focus"]) == 1000


def test_a_new_file_rebuilds(nothing_new: dict) -> None:
    new = nothing_new["new_file"]
    assert new["ok"], new["reason"]
    assert new["run_id"] not in (nothing_new["first"]["run_id"], nothing_new["full"]["run_id"])
    assert new["publication"][0] == new["run_id"] and new["status"]["message"] == "published"


def test_an_altered_file_rebuilds_and_then_is_the_new_baseline(nothing_new: dict) -> None:
    altered, again = nothing_new["altered"], nothing_new["after_altered"]
    assert altered["ok"], altered["reason"]
    assert altered["run_id"] != nothing_new["new_file"]["run_id"]
    assert altered["publication"][0] == altered["run_id"]
    assert again["ok"] and again["status"]["no_new_data"] and again["run_id"] == altered["run_id"]
    assert again["publication"] == altered["publication"]


def _state(**change: object) -> RefreshState:
    base = {"families": {"billing": "a", "usage": "b"}, "code": "c", "month": "2026-12", "engine": "duckdb"}
    return RefreshState(**{**base, **change})


def test_what_counts_as_the_same_build() -> None:
    recorded = {"families": {"billing": "a", "usage": "b"}, "code": "c", "month": "2026-12", "engine": "duckdb"}
    assert _state().same_build(recorded)
    assert not _state().same_build(None)  # nothing recorded (first run, or the last one failed)
    assert not _state(code="d").same_build(recorded)  # the dbt project or the pipeline changed
    assert not _state(month="2027-01").same_build(recorded)  # month-end forecasts compare with today
    assert not _state(engine="spark").same_build(recorded)
    assert not _state(fetching=["openai_costs"]).same_build(recorded)  # a fetch may bring new data
    assert _state(families={"billing": "a", "usage": "x"}).changed_families(recorded) == ["usage"]
    assert _state(code="d").changed_families(recorded) is None


def test_an_enabled_fetch_in_the_inputs_is_seen(tmp_path: Path) -> None:
    assert enabled_fetches(tmp_path) == []  # the repository's configuration enables nothing
    (tmp_path / "registry").mkdir()
    (tmp_path / "registry" / "price_sources.yaml").write_text(
        "pages:\n  - name: my-cloud\n    enabled: true\n    url: https://example.invalid/p\n")
    assert enabled_fetches(tmp_path) == ["my-cloud"]
    state = current_state(tmp_path / "home", tmp_path)
    assert state.fetching == ["my-cloud"] and not state.same_build({**state.__dict__})
