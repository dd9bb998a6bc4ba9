"""The refresh's own warm dbt worker (pipelines/dbt_warm.py): `gpu-ledger-dbt --in HOME` hands its command
to it when the folder and environment are exactly the worker's (the ones dagster-dbt gives the build),
gets dbt's output and exit code from it, and the worker ends; any other command is refused and runs
in the caller as before; the worker never outlives the block that started it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from pipelines.dbt_entry import DBT_LEDGER_VARS
from pipelines.dbt_parse import PARTIAL_PARSE, load_manifest, parse_to_read, project_parse
from pipelines.dbt_server import ENV_VAR
from pipelines.dbt_warm import SOCKET_NAME, dbt_env, warm_dbt
from tests.conftest import REPO
from tests.pipeline.test_dbt_server import _tiny_project
from warehouse.home import DBT_DIR

GPU_LEDGER_DBT = REPO / ".venv" / "bin" / "gpu-ledger-dbt"


def _listening(home: Path, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while not (home / SOCKET_NAME).is_socket():
        assert proc.poll() is None and time.monotonic() < deadline, "the worker never listened"
        time.sleep(0.1)


@pytest.fixture
def no_session_server(monkeypatch: pytest.MonkeyPatch) -> None:
    # The test session's warm server takes every command when named; this worker stands in for it.
    monkeypatch.delenv(ENV_VAR, raising=False)


def test_the_build_command_runs_in_the_worker(no_session_server: None, tmp_path: Path) -> None:
    target, log = tmp_path / "dbt-target", tmp_path / "logs" / "dbt-warm.log"
    target.mkdir()  # a home with the project's parse (dagster-dbt's copy): the worker decodes it ahead
    shutil.copyfile(project_parse(), target / PARTIAL_PARSE)
    with warm_dbt(tmp_path, target, log) as proc:
        assert proc is not None
        _listening(tmp_path, proc)
        args = ["ls", "--log-format", "text", "--vars", json.dumps(DBT_LEDGER_VARS, sort_keys=True),
                "--resource-type", "model", "--output", "name", "--quiet"]
        done = subprocess.run([str(GPU_LEDGER_DBT), "--in", str(tmp_path), *args],
                              env=dbt_env(target, DBT_DIR, DBT_DIR), capture_output=True, text=True, timeout=300,
                              check=False)
        assert done.returncode == 0, done.stderr
        # dbt's own output, written by the worker on the caller's stdout: every model of the project
        models = [n["name"] for n in load_manifest()["nodes"].values() if n["resource_type"] == "model"]
        assert sorted(done.stdout.split()) == sorted(models)
        assert proc.wait(timeout=60) == 0  # one command served: the worker is done
    text = log.read_text()
    assert f"dbt_warm: running {args}" in text
    assert "dbt_warm: exit code 0; the parse decoded ahead was used" in text  # pipelines/dbt_preparse.py
    assert not (tmp_path / SOCKET_NAME).exists()


def test_the_worker_decodes_the_parse_the_build_will_read(tmp_path: Path) -> None:
    assert parse_to_read(tmp_path) == project_parse()  # a new home: dagster-dbt copies that
    (tmp_path / PARTIAL_PARSE).write_bytes(b"the home's own")
    assert parse_to_read(tmp_path) == tmp_path / PARTIAL_PARSE


def test_another_environment_is_refused_and_runs_in_the_caller(no_session_server: None, tmp_path: Path) -> None:
    target, log = tmp_path / "dbt-target", tmp_path / "logs" / "dbt-warm.log"
    with warm_dbt(tmp_path, target, log) as proc:
        assert proc is not None
        _listening(tmp_path, proc)
        env = {**dbt_env(target, DBT_DIR, DBT_DIR), "DBT_INDIRECT_SELECTION": "empty"}
        done = subprocess.run([str(GPU_LEDGER_DBT), "--in", str(tmp_path), "--version"], env=env,
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        assert "Core" in done.stdout  # dbt ran all the same, in the caller
        assert proc.wait(timeout=60) == 0
    text = log.read_text()
    assert "environment differs in DBT_INDIRECT_SELECTION" in text
    assert "running" not in text


def test_an_unused_worker_ends_with_the_block(no_session_server: None, tmp_path: Path) -> None:
    with warm_dbt(tmp_path, tmp_path / "t", tmp_path / "logs" / "dbt-warm.log") as proc:
        assert proc is not None
        _listening(tmp_path, proc)
    assert proc.poll() is not None
    assert not (tmp_path / SOCKET_NAME).exists()


def test_no_worker_when_the_session_server_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "elsewhere.sock"))
    with warm_dbt(tmp_path, tmp_path / "t", tmp_path / "logs" / "dbt-warm.log") as proc:
        assert proc is None
    assert not (tmp_path / "logs" / "dbt-warm.log").exists()


# What the worker does with one command: dbt's CLI in this process (run_dbt), then os._exit, which runs
# no interpreter exit (no atexit, no destructors).
_RUN_THEN_EXIT = """
import os, sys
from pipelines.dbt_entry import run_dbt
os.chdir(sys.argv[1])
os._exit(run_dbt(["run", "--project-dir", ".", "--profiles-dir", ".", "--target-path", sys.argv[2], "-q"]))
"""


def test_a_command_ended_by_os_exit_leaves_its_database_checkpointed(tmp_path: Path) -> None:
    """dbt-duckdb closes its database only with the last of its cursors, and a two-thread command leaves
    some open: a worker ending by os._exit left the night's changes in DuckDB's write-ahead log, which the
    refresh's next connection replayed (8,264 bytes here; 228 MB at 256 GPUs x 30 days). run_dbt
    checkpoints and closes the database first: no log, and the table is in the database file itself."""
    project = _tiny_project(tmp_path / "tiny")
    (project / "profiles.yml").write_text((project / "profiles.yml").read_text().replace("threads: 1", "threads: 2"))
    (project / "models" / "m.sql").write_text("{{ config(materialized='table') }}\nselect range as x from range(1000)\n")
    (project / "models" / "m.yml").unlink()  # no data test: the command is the model's build alone
    done = subprocess.run([sys.executable, "-c", _RUN_THEN_EXIT, str(project), str(tmp_path / "target")],
                          cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    wal = project / "tiny.duckdb.wal"
    assert not wal.exists() or wal.stat().st_size == 0, f"{wal.stat().st_size} bytes of log left"
    con = duckdb.connect(str(project / "tiny.duckdb"), read_only=True)
    try:
        assert con.execute("select count(*), sum(x) from m").fetchall() == [(1000, 499500)]  # 0 + 1 + ... + 999
    finally:
        con.close()
