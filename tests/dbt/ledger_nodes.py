"""dbt nodes run alone on a copy of a built ledger, as the pipeline runs dbt, with a fresh target folder.

Tests that change a model's inputs by hand and rebuild or check only the nodes concerned (incremental days,
check scopes, windowed builds) share this instead of a refresh. The command runs through `gpu-ledger-dbt`
inside the ledger's folder with the pipeline's vars (`DBT_LEDGER_VARS`), so the parse `gpu-ledger prepare`
left in dbt/target applies (a partial parse, not a whole one); settings a test varies go through the
environment, not `--vars` (other vars would make dbt parse the whole project again, ~4 CPU s). Only
run_results.json is written (`--run-results-only`: no manifest, ~1.5 CPU s less); compiled SQL still is.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb

from pipelines.dbt_entry import DBT_LEDGER_VARS, RUN_RESULTS_ONLY
from pipelines.dbt_project import ledger_dbt_executable
from warehouse.home import DBT_DIR

LEDGER = DBT_LEDGER_VARS["ledger_db"]  # dbt-duckdb names the catalog after the file: `ledger`


def copy_ledger(home: Path, dst: Path, raw: bool = False) -> Path:
    """A copy of `home`'s ledger as dst/ledger.duckdb (and its raw Parquet layer when `raw`)."""
    dst.mkdir(parents=True)
    shutil.copy(home / LEDGER, dst / LEDGER)
    if raw:
        shutil.copytree(home / "ledger.raw", dst / "ledger.raw")
    return dst / LEDGER


def change(ledger: Path, sql: list[str]) -> None:
    """Run `sql` statements on the ledger (hand-made input changes)."""
    con = duckdb.connect(str(ledger))
    try:
        for statement in sql:
            con.execute(statement)
    finally:
        con.close()


def query(ledger: Path, sql: str) -> list[tuple]:
    """The rows `sql` returns on the ledger, read-only."""
    con = duckdb.connect(str(ledger), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def nightly_and_full(home: Path, base: Path, changes: list[str], build: Callable[..., None],
                     read: Callable[[Path], Any]) -> dict[str, Any]:
    """Copy `home`'s ledger, change its inputs by `changes`, then build it as a night does (`build(ledger)`) and a
    copy of the changed ledger with `build(ledger, "--full-refresh")`: {"before", "after", "full"} as `read` reads
    them."""
    nightly = copy_ledger(home, base / "nightly")
    before = read(nightly)
    change(nightly, changes)
    full = copy_ledger(nightly.parent, base / "full")
    build(nightly)
    build(full, "--full-refresh")
    return {"before": before, "after": read(nightly), "full": read(full)}


def rebuilt_periods(before: dict[str, tuple], after: dict[str, tuple], stamp: int = 1) -> list[str]:
    """The periods (days, months) of `after` whose build stamp (item `stamp` of each value) is newer than every
    stamp of `before`; asserts every other period of `after` kept its value (rows, stamp, totals) exactly."""
    newest = max(value[stamp] for value in before.values())
    rebuilt = sorted(p for p, value in after.items() if value[stamp] > newest)
    for p, value in after.items():
        if p not in rebuilt:
            assert value == before[p], p
    return rebuilt


def run_nodes(ledger: Path, command: str, *args: str, target: Path,
              env: dict[str, str] | None = None, project: Path = DBT_DIR) -> tuple[dict[str, str], str]:
    """`dbt <command> <args>` (selection, flags) on `ledger` with the fresh target folder `target`;
    ({unique_id: status} of the nodes it ran, dbt's output). `env`: variables added for this command;
    `project`: the dbt project folder (a changed copy of the repository's; the profile stays the repository's,
    so the parse `gpu-ledger prepare` left still applies, to every file but the changed ones)."""
    assert ledger.name == LEDGER, ledger
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    shutil.copy(DBT_DIR / "target" / "partial_parse.msgpack", target / "partial_parse.msgpack")
    done = subprocess.run(
        [ledger_dbt_executable(), "--in", str(ledger.parent), RUN_RESULTS_ONLY, command, *args,
         "--project-dir", str(project), "--profiles-dir", str(DBT_DIR), "--target-path", str(target),
         "--log-path", str(target), "--vars", json.dumps(DBT_LEDGER_VARS)],
        capture_output=True, text=True, timeout=900, check=False, env={**os.environ, **(env or {})})
    results = target / "run_results.json"
    assert results.is_file(), done.stdout[-3000:] + done.stderr[-3000:]
    statuses = {r["unique_id"]: r["status"] for r in json.loads(results.read_text())["results"]}
    return statuses, done.stdout


def run_models(ledger: Path, models: tuple[str, ...] | list[str], *extra: str, target: Path | None = None,
               env: dict[str, str] | None = None, project: Path = DBT_DIR) -> str:
    """`dbt run` of `models` alone, in one command (`extra`: e.g. --full-refresh; `project` as run_nodes);
    asserts exactly they ran and each succeeded; dbt's output."""
    statuses, out = run_nodes(ledger, "run", *extra, "--select", *models,
                              target=target or ledger.parent / "target", env=env, project=project)
    ran = {u: s for u, s in statuses.items() if u.startswith("model.")}
    assert ran == {f"model.gpu_ledger.{m}": "success" for m in models}, out[-3000:]
    return out


def run_model(ledger: Path, model: str, *extra: str, target: Path | None = None,
              env: dict[str, str] | None = None) -> str:
    """`dbt run` of one model alone (`extra`: e.g. --full-refresh); asserts it succeeded; dbt's output."""
    return run_models(ledger, [model], *extra, target=target, env=env)


def run_checks(ledger: Path, checks: tuple[str, ...], *extra: str, target: Path,
               command: str = "test") -> dict[str, tuple[str, list[str], list[tuple]]]:
    """The data tests `checks` in one dbt command (`command` test, or build with e.g. --full-refresh);
    per check: its status, and the column names and rows its compiled SQL returns on the ledger."""
    statuses, out = run_nodes(ledger, command, *extra, "--select", *checks, target=target)
    found: dict[str, tuple[str, list[str], list[tuple]]] = {}
    con = duckdb.connect(str(ledger), read_only=True)
    try:
        for check in checks:
            # a generic test's id ends in a hash of its arguments: match on the node's name
            (status,) = [s for u, s in statuses.items() if u.split(".")[:3] == ["test", "gpu_ledger", check]] or [None]
            assert status is not None, out[-3000:]
            (compiled,) = (target / "compiled").rglob(f"{check}.sql")
            cur = con.execute(f"select * from ({compiled.read_text()}) as failing")
            found[check] = (status, [d[0] for d in cur.description], cur.fetchall())
    finally:
        con.close()
    return found
