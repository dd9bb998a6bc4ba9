"""A new version of an incremental model that returns a column more builds on an existing ledger.

Every incremental model whose history-wide inputs can change calls `clear_when_history_changed`
(macros/incremental_days.sql) as its pre-hook. When its SQL changes (a new column is such a change), every day
is rebuilt, and the table it built before lacks the new column. Left to dbt's `append_new_columns`, that column
was added in a transaction of its own and the build's commit failed ("another transaction has altered this
table"): the first nightly refresh after an upgrade failed on every existing ledger. The pre-hook now adds
every column the model's SQL returns that the table lacks.

On a copy of the sample ledger, one ordinary output column is dropped from each such model (the first column
that is neither its day key nor a build column `x_*`) with its stored history key (so every day is rebuilt, as
after an upgrade of its SQL). One `dbt run` of those models and their key models must succeed; each table has
its column back and the same rows as the sample refresh built (build stamps and digests aside).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.dbt_parse import load_manifest
from tests import prefetch
from tests.dbt.ledger_nodes import change, copy_ledger, query, run_models

HOOK = "clear_when_history_changed"


def _build_column(column: str) -> bool:
    """The build's own bookkeeping: its stamp, its history key and digests of what it read (stamps of the
    models upstream, rebuilt in the same run)."""
    return column in ("x_built_at", "x_history_key") or column.endswith("_digest")


def _models() -> dict[str, dict]:
    """The models whose pre-hook is the clear, by name (their nodes in the parsed project)."""
    nodes = load_manifest()["nodes"].values()
    found = {n["name"]: n for n in nodes if n["resource_type"] == "model"
             and any(HOOK in (h.get("sql") or "") for h in n["config"].get("pre-hook") or [])}
    assert len(found) >= 10, sorted(found)  # the usage, billing, cost and export chains
    return found


def _key_models(models: dict[str, dict]) -> set[str]:
    """The history key models those pre-hooks read (`..._history_key`), which the run rebuilds first."""
    return {dep.rsplit(".", 1)[-1] for n in models.values() for dep in n["depends_on"]["nodes"]
            if dep.endswith("_history_key")}


def _columns(ledger: Path, schema: str, table: str) -> list[str]:
    return [r[0] for r in query(ledger, f"select column_name from information_schema.columns where "
                                        f"table_schema = '{schema}' and table_name = '{table}' "
                                        f"order by ordinal_position")]


def _rows(ledger: Path, schema: str, table: str, columns: list[str]) -> list[tuple]:
    listed = ", ".join(f'"{c}"' for c in columns)
    return query(ledger, f'select {listed} from {schema}."{table}" order by all')


def build_upgrade(root: Path, sample_run: dict) -> dict:
    """The columns dropped and the run that brings them back (a tests/prefetch.py job, after the sample refresh)."""
    assert sample_run["ok"], sample_run["reason"]
    models = _models()
    ledger = copy_ledger(Path(sample_run["home"]), root / "home", raw=True)
    dropped, before, statements = {}, {}, []
    for name, node in sorted(models.items()):
        columns = _columns(ledger, node["schema"], name)
        key = (node["config"].get("unique_key") or "").lower()
        dropped[name] = next(c for c in columns if not c.lower().startswith("x_") and c.lower() != key)
        kept = [c for c in columns if not _build_column(c)]
        before[name] = (kept, _rows(ledger, node["schema"], name, kept))
        statements += [f'alter table {node["schema"]}."{name}" drop column "{dropped[name]}"',
                       f'alter table {node["schema"]}."{name}" drop column x_history_key']
    change(ledger, statements)
    log = run_models(ledger, sorted(_key_models(models) | set(models)))
    after = {name: (_columns(ledger, node["schema"], name),
                    _rows(ledger, node["schema"], name, before[name][0])) for name, node in models.items()}
    return {"models": sorted(models), "dropped": dropped, "before": before, "after": after, "log": log}


@pytest.fixture(scope="module")
def upgrade(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("history_new_columns", tmp_path_factory)


def test_every_model_rebuilt_every_day(upgrade: dict) -> None:
    # run_models asserted every model ran and succeeded; each said why it rebuilt everything
    for name in upgrade["models"]:
        assert f"{name}: history-wide inputs changed, every day is rebuilt" in upgrade["log"], name


def test_each_dropped_column_is_back_with_the_rows_built_before(upgrade: dict) -> None:
    for name, column in upgrade["dropped"].items():
        columns, rows = upgrade["after"][name]
        assert column in columns and "x_history_key" in columns, (name, column, columns)
        kept, rows_before = upgrade["before"][name]
        assert rows == rows_before, (name, column)
        assert rows_before, name  # the sample refresh gave every one of them rows to compare
