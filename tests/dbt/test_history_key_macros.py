"""A history key covers the project's macros its model is built with (macros/incremental_export_days.sql
called_macro_digests): an upgrade that edits such a macro moves the key, so every day is rebuilt with the new
SQL; a macro the model does not call leaves its key as it is.

On a copy of the sample ledger, the history keys of the API requests (int_api_requests_history_key, the
requests' staging SQL is the macro staged_api_requests, macros/latest_rows.sql) and of the usage chain
(int_usage_history_key, whose models name GPUs by the macro canonical_gpu_model) are run from a copy of the
dbt project with one macro edited, and compared with the keys the sample refresh stored (same registry
files, same code but that macro):
- canonical_gpu_model gains a name rule (GB300): the usage key moves; the API requests call no GPU name rule
  (neither their models nor any macro they call name it), so their key stays;
- canonical_gpu_model as it was, staged_api_requests trims the currency: the API key moves; the usage models
  call no API macro, so the usage key is the stored one again (same code, same key, in another process);
- both macros as they were, the scheduler jobs' staging model (stg_usage__gpu_jobs, upstream of the usage
  folder, not in it) reads its rows through a subquery (a text change, the same rows: the key is over code,
  not its effect): the usage key moves, so every usage day would be rebuilt; the API requests read no job,
  so their key is the stored one.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from tests.dbt.ledger_nodes import copy_ledger, run_models
from warehouse.home import DBT_DIR

KEYS = ("int_api_requests_history_key", "int_usage_history_key")
GPU_RULE = ("        ('GB200', 'GB200'),\n", "        ('GB300', 'GB300'),\n        ('GB200', 'GB200'),\n")
JOBS_RULE = ("{{ staged_gpu_jobs() }}", "select * from ({{ staged_gpu_jobs() }}) as jobs")
API_CURRENCY = ("upper(coalesce(currency, 'USD')) as currency", "upper(trim(coalesce(currency, 'USD'))) as currency")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new))


def _keys(ledger: Path, project: Path) -> dict[str, list[tuple]]:
    """Run the two history keys from `project` on `ledger`; each key's one value."""
    run_models(ledger, list(KEYS), project=project)
    return _read(ledger)


def _read(ledger: Path) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(ledger), read_only=True)
    try:
        return {k: con.execute(f"select x_history_key from intermediate.{k}").fetchall() for k in KEYS}
    finally:
        con.close()


@pytest.fixture(scope="module")
def keys(sample_run: dict, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, list[tuple]]]:
    assert sample_run["ok"], sample_run["reason"]
    base = tmp_path_factory.mktemp("history_key_macros")
    ledger = copy_ledger(Path(sample_run["home"]), base / "home")
    project = base / "dbt"
    shutil.copytree(DBT_DIR, project, ignore=shutil.ignore_patterns("target", "logs", "dbt_packages"))
    found = {"stored": _read(ledger)}
    names = project / "macros" / "canonical_gpu_model.sql"
    _edit(names, *GPU_RULE)
    found["gpu_rule"] = _keys(ledger, project)
    _edit(names, *reversed(GPU_RULE))
    _edit(project / "macros" / "latest_rows.sql", *API_CURRENCY)
    found["api_currency"] = _keys(ledger, project)
    _edit(project / "macros" / "latest_rows.sql", *reversed(API_CURRENCY))
    _edit(project / "models" / "staging" / "usage" / "stg_usage__gpu_jobs.sql", *JOBS_RULE)
    found["jobs_staging"] = _keys(ledger, project)
    return found


def test_a_macro_the_model_calls_moves_its_key(keys: dict[str, dict[str, list[tuple]]]) -> None:
    stored = keys["stored"]
    assert all(len(rows) == 1 for rows in stored.values()), stored
    assert keys["gpu_rule"]["int_usage_history_key"] != stored["int_usage_history_key"]
    assert keys["api_currency"]["int_api_requests_history_key"] != stored["int_api_requests_history_key"]


def test_a_model_upstream_of_the_usage_folder_moves_the_usage_key(keys: dict[str, dict[str, list[tuple]]]) -> None:
    stored = keys["stored"]
    assert keys["jobs_staging"]["int_usage_history_key"] != stored["int_usage_history_key"]
    assert keys["jobs_staging"]["int_api_requests_history_key"] == stored["int_api_requests_history_key"]


def test_a_macro_the_model_does_not_call_leaves_its_key(keys: dict[str, dict[str, list[tuple]]]) -> None:
    stored = keys["stored"]
    assert keys["gpu_rule"]["int_api_requests_history_key"] == stored["int_api_requests_history_key"]
    assert keys["api_currency"]["int_usage_history_key"] == stored["int_usage_history_key"]
