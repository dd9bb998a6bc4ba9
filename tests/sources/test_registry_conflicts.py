"""Registry conflicts across files (warehouse/registry_check.py), checked at load, before any model.

The bundled registry (teams.yaml, workloads.yaml) plus hand-written files: a conflicting entry is
quarantined and listed in audit.dq_rejects with file, line and what it conflicts with; the rest
loads. A workload lost that way that loaded rows still use stops the refresh with one line
(RegistryStop), on every refresh until the registry is fixed.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import duckdb
import pytest

from tests.conftest import SAMPLES
from warehouse.ingest import ingest_family
from warehouse.landing import land_inputs
from warehouse.registry_check import RegistryStop

EVAL_RUNS = SAMPLES / "benchmarks" / "eval_runs.csv"  # 3 runs of workload nightly-evals


def _inputs(tmp_path: Path, extra: dict[str, str], *, evals: bool = False) -> Path:
    inputs = tmp_path / "inputs"
    shutil.copytree(SAMPLES / "registry", inputs / "registry")  # copy2: older times, so landed first
    for name, text in extra.items():
        (inputs / "registry" / name).write_text(text)
    if evals:
        (inputs / "benchmarks").mkdir()
        shutil.copyfile(EVAL_RUNS, inputs / "benchmarks" / "eval_runs.csv")
    return inputs


def _load(tmp_path: Path, inputs: Path, run: str) -> duckdb.DuckDBPyConnection:
    landing = tmp_path / "landing"
    families = ("registry", "benchmarks")
    land_inputs(inputs, landing, families)
    con = duckdb.connect(str(tmp_path / "ledger.duckdb"))
    ingest_family(con, "benchmarks", landing, run)
    ingest_family(con, "registry", landing, run)
    return con


def _rejects(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    return con.execute("select file_name, line, rule, value from audit.dq_rejects where source_family = 'registry' "
                       "order by file_name, line").fetchall()


def test_duplicates_and_unknown_teams_are_quarantined_the_rest_loads(tmp_path: Path) -> None:
    extra = """teams:
  - id: research
    name: Not the research team
  - id: lab
    name: Lab
workloads:
  - id: lab-evals
    team: lab
    type: evaluation
  - id: lab-evals
    team: lab
    type: evaluation
  - id: orphan
    team: nobody
    type: evaluation
  - id: teamless
    type: evaluation
"""
    con = _load(tmp_path, _inputs(tmp_path, {"zz_more.yaml": extra}), "run-1")
    try:
        assert _rejects(con) == [
            ("zz_more.yaml", 2, "registry_duplicate_team", "research"),
            ("zz_more.yaml", 10, "registry_duplicate_workload", "lab-evals"),
            ("zz_more.yaml", 13, "registry_unknown_team", "nobody"),
            # no team at all: before, it loaded with a NULL team_id and the blocking staging check withheld
            # every source (85 failing checks)
            ("zz_more.yaml", 16, "registry_unknown_team", ""),
        ]
        [msg] = con.execute("select message from audit.dq_rejects where value = ''").fetchone()
        assert msg.startswith("zz_more.yaml:16: workload 'teamless' names no team (teams: ")
        [msg] = con.execute("select message from audit.dq_rejects where rule = 'registry_duplicate_team'").fetchone()
        assert msg.startswith("zz_more.yaml:2: team 'research' is already defined at teams.yaml:4")
        teams = dict(con.execute("select team_id, name from raw.registry_teams").fetchall())
        assert teams["research"] == "Foundation Research" and teams["lab"] == "Lab"
        lab = con.execute("select count(*) from raw.registry_workloads where workload_id = 'lab-evals'").fetchone()
        assert lab == (1,)
        # file_loads counts agree: 2 teams + 4 workloads parsed, 4 quarantined
        assert con.execute("select rows_loaded, rejects from audit.file_loads where source_file = 'zz_more.yaml'"
                           ).fetchone() == (2, 4)
    finally:
        con.close()


def test_a_lost_workload_still_in_use_stops_every_refresh_until_fixed(tmp_path: Path) -> None:
    workloads = (SAMPLES / "registry" / "workloads.yaml").read_text()
    typo = workloads.replace("  - id: nightly-evals\n    name: Nightly evaluation suites\n    team: research\n",
                             "  - id: nightly-evals\n    name: Nightly evaluation suites\n    team: reserch\n")
    assert typo != workloads
    inputs = _inputs(tmp_path, {}, evals=True)
    (inputs / "registry" / "workloads.yaml").write_text(typo)
    for run in ("run-1", "run-2"):  # the second refresh finds no new file and still stops
        with pytest.raises(RegistryStop) as stop:
            _load(tmp_path, inputs, run).close()
        line = str(stop.value)
        assert line.startswith("workloads.yaml:122: workload 'nightly-evals' names team 'reserch', which no "
                               "registry file defines"), line
        assert "3 row(s) of raw.eval_runs use workload 'nightly-evals'" in line and "\n" not in line
    (inputs / "registry" / "workloads.yaml").write_text(workloads)  # fixed: loads, no stop
    # Versions of one registry file are ordered by observed time at whole seconds: the fix must be observed
    # after the typo, not in the same second (a tie made this test fail once in five CI runs).
    later = time.time() + 5
    os.utime(inputs / "registry" / "workloads.yaml", (later, later))
    con = _load(tmp_path, inputs, "run-3")
    try:
        assert con.execute("select team_id from raw.registry_workloads as w join audit.file_loads as f "
                           "on w._file_hash = f.file_hash where workload_id = 'nightly-evals' "
                           "order by f.observed_at desc limit 1").fetchone() == ("research",)
    finally:
        con.close()


def test_an_unknown_workload_type_in_use_stops_with_its_line(tmp_path: Path) -> None:
    workloads = (SAMPLES / "registry" / "workloads.yaml").read_text()
    inputs = _inputs(tmp_path, {}, evals=True)
    (inputs / "registry" / "workloads.yaml").write_text(
        workloads.replace("    team: research\n    type: evaluation\n", "    team: research\n    type: evaluaton\n", 1))
    with pytest.raises(RegistryStop) as stop:
        _load(tmp_path, inputs, "run-1").close()
    assert str(stop.value).startswith("workloads.yaml:125: workload 'nightly-evals': workload_type 'evaluaton' "
                                      "is not one of"), str(stop.value)
    assert "did you mean 'evaluation'?" in str(stop.value)
