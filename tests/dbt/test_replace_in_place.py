"""The project's DuckDB `table` and `view` materializations (dbt/macros/materializations/replace_in_place.sql).

They replace a relation with one `create or replace` in the model's transaction instead of dbt's
temporary name, two renames and a drop. What that must not lose: a model whose build
fails leaves the previous relation and its rows in place; nothing is left under a temporary or
backup name; a model can change between table and view; a model with an enforced contract is
refused loudly rather than built without its constraints. Checked on a two-model project in a
temporary folder, with the macro file copied from the project, run by dbt's own programmatic API.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from warehouse.home import DBT_DIR

MACRO = DBT_DIR / "macros" / "materializations" / "replace_in_place.sql"


class MiniProject:
    """A dbt project of two models, `t` (over literal rows) and `v` (over `t`), on its own DuckDB file."""

    def __init__(self, root: Path) -> None:
        self.root, self.db = root, root / "mini.duckdb"
        (root / "macros").mkdir(parents=True)
        (root / "models").mkdir()
        shutil.copy(MACRO, root / "macros" / MACRO.name)
        (root / "dbt_project.yml").write_text(
            "name: mini\nversion: '1.0'\nconfig-version: 2\nprofile: mini\n"
            "model-paths: [models]\nmacro-paths: [macros]\n")
        (root / "profiles.yml").write_text(
            f"mini:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n      path: '{self.db}'\n      threads: 1\n")

    def model(self, name: str, materialized: str, sql: str, contract: bool = False) -> None:
        config = f"materialized='{materialized}'" + (", contract={'enforced': true}" if contract else "")
        (self.root / "models" / f"{name}.sql").write_text(f"{{{{ config({config}) }}}}\n{sql}\n")
        yml = self.root / "models" / "schema.yml"
        if contract:  # an enforced contract needs the columns and their types declared
            yml.write_text(f"version: 2\nmodels:\n  - name: {name}\n    columns:\n"
                           "      - {name: id, data_type: integer}\n      - {name: label, data_type: varchar}\n")
        else:
            yml.unlink(missing_ok=True)

    def run(self) -> tuple[bool, str]:
        """`dbt run`; (success, the messages of the nodes that did not succeed)."""
        from dbt.cli.main import dbtRunner

        res = dbtRunner().invoke(["run", "--project-dir", str(self.root), "--profiles-dir", str(self.root),
                                  "--target-path", str(self.root / "target"), "--log-path", str(self.root),
                                  "--log-level", "none"])
        problems = " | ".join(str(r.message) for r in (res.result or []) if str(r.status) != "success")
        if res.exception is not None:
            problems += f" | {res.exception}"
        return res.success, problems

    def _connect(self) -> duckdb.DuckDBPyConnection:
        # dbt-duckdb keeps its database open in this process after a run; a second connection must use
        # the same configuration (read-write), or DuckDB refuses it.
        return duckdb.connect(str(self.db))

    def relations(self) -> dict[str, str]:
        """name -> 'BASE TABLE' or 'VIEW', every relation in the file."""
        con = self._connect()
        try:
            return dict(con.execute("select table_name, table_type from information_schema.tables").fetchall())
        finally:
            con.close()

    def rows(self, name: str) -> list[tuple]:
        con = self._connect()
        try:
            return con.execute(f"select id, label from {name} order by id").fetchall()
        finally:
            con.close()


@pytest.fixture(scope="module")
def sequence(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One project through six runs (each a dbt start, so shared by the tests): what each run left."""
    mini = MiniProject(tmp_path_factory.mktemp("replace") / "mini")
    seen: dict = {}
    mini.model("t", "table", "select 1 as id, 'old' as label")
    mini.model("v", "view", "select * from {{ ref('t') }}")
    seen["first"] = mini.run()
    # 1: a build that fails inside DuckDB, over the first run's table
    mini.model("t", "table", "select cast('not a number' as integer) as id, 'bad' as label")
    seen["failed"] = (*mini.run(), mini.rows("t"), mini.relations())
    # 2: a good rebuild
    mini.model("t", "table", "select 2 as id, 'new' as label union all select 3, 'new'")
    executed = mini.root / "target" / "run" / "mini" / "models" / "t.sql"
    seen["rebuilt"] = (*mini.run(), mini.rows("t"), mini.rows("v"), mini.relations(), executed.read_text())
    # 3: the view becomes a table, then a view again
    mini.model("v", "table", "select * from {{ ref('t') }}")
    seen["to_table"] = (*mini.run(), mini.relations())
    mini.model("v", "view", "select id + 10 as id, label from {{ ref('t') }}")
    seen["to_view"] = (*mini.run(), mini.relations(), mini.rows("v"))
    # 4: an enforced contract
    mini.model("t", "table", "select 5 as id, 'contract' as label", contract=True)
    seen["contract"] = (*mini.run(), mini.rows("t"))
    return seen


def test_the_first_run_builds_both_models(sequence: dict) -> None:
    ok, problems = sequence["first"]
    assert ok, problems


def test_a_failed_rebuild_keeps_the_previous_table_and_its_rows(sequence: dict) -> None:
    ok, problems, rows, relations = sequence["failed"]
    assert not ok
    assert "not a number" in problems  # DuckDB's conversion error reaches dbt's result
    assert rows == [(1, "old")]
    assert relations == {"t": "BASE TABLE", "v": "VIEW"}


def test_a_rebuild_replaces_rows_in_one_statement_and_leaves_no_temporary_relation(sequence: dict) -> None:
    ok, problems, t_rows, v_rows, relations, executed = sequence["rebuilt"]
    assert ok, problems
    assert t_rows == [(2, "new"), (3, "new")]
    assert v_rows == [(2, "new"), (3, "new")]  # the view reads the replaced table by name
    assert relations == {"t": "BASE TABLE", "v": "VIEW"}  # no __dbt_tmp / __dbt_backup left over
    assert "create or replace table" in executed and "rename" not in executed


def test_a_model_changes_between_view_and_table(sequence: dict) -> None:
    ok, problems, relations = sequence["to_table"]
    assert ok, problems
    assert relations == {"t": "BASE TABLE", "v": "BASE TABLE"}
    ok, problems, relations, v_rows = sequence["to_view"]
    assert ok, problems
    assert relations == {"t": "BASE TABLE", "v": "VIEW"}
    assert v_rows == [(12, "new"), (13, "new")]


def test_an_enforced_contract_is_refused_not_built_without_its_constraints(sequence: dict) -> None:
    ok, problems, rows = sequence["contract"]
    assert not ok
    assert "replace_in_place.sql" in problems and "enforced contracts" in problems
    assert rows == [(2, "new"), (3, "new")]
