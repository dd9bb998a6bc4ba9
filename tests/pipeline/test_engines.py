"""Choosing the engine for the dbt transforms (pipelines/engines.py, `gpu-ledger run --engine`)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from pipelines.cli import app
from pipelines.defs.transform.assets import DbtBuildConfig, dbt_build_args
from pipelines.engines import prepare_engine, publish_engine_marts
from warehouse.home import REPO_ROOT


def test_duckdb_is_the_default_and_builds_in_the_ledger() -> None:
    # dbt unit tests (SQL logic on literal rows) are left to the test suite unless asked for.
    assert dbt_build_args(DbtBuildConfig()) == ["build", "--log-level-file", "none",
                                                 "--exclude-resource-type", "unit_test"]
    assert dbt_build_args(DbtBuildConfig(unit_tests=True)) == ["build", "--log-level-file", "none"]
    # The ledger path reaches dbt's profile as a var, merged with a backfill window.
    args = dbt_build_args(DbtBuildConfig(backfill_from="2025-04-01", backfill_to="2025-04-02"),
                          {"ledger_db": "/h/ledger.duckdb"})
    assert args == ["build", "--log-level-file", "none", "--exclude-resource-type", "unit_test",
                    "--vars", '{"backfill_from": "2025-04-01", "backfill_to": "2025-04-02", '
                              '"ledger_db": "/h/ledger.duckdb"}']


def test_spark_builds_on_the_spark_target_without_unit_tests() -> None:
    args = dbt_build_args(DbtBuildConfig(engine="spark", full_refresh=True, unit_tests=True))
    assert args[:7] == ["build", "--log-level-file", "none", "--target", "spark", "--exclude-resource-type", "unit_test"]
    assert "--full-refresh" in args


def test_an_unknown_engine_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown engine 'trino'"):
        dbt_build_args(DbtBuildConfig(engine="trino"))
    with pytest.raises(ValueError, match="unknown engine"):
        prepare_engine("trino", tmp_path, tmp_path / "ledger.duckdb")
    result = CliRunner().invoke(app, ["run", "--engine", "trino", "--home", str(tmp_path / "home")])
    assert result.exit_code == 2
    assert "expected one of duckdb, spark" in result.output
    assert not (tmp_path / "home" / "ledger.duckdb").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--spark-master", "spark://127.0.0.1:7077"], "only with --engine spark"),
    (["--engine", "spark", "--spark-master", "yarn"], "expected spark://HOST:PORT or local[N]"),
])
def test_a_spark_master_is_checked_before_anything_runs(tmp_path: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["run", *args, "--home", str(tmp_path / "home")])
    assert result.exit_code == 2
    assert message in result.output
    assert not (tmp_path / "home" / "ledger.duckdb").exists()


def test_a_spark_master_reaches_the_profile_as_a_var(tmp_path: Path) -> None:
    """The profile's `spark.master` reads the var (dbt/profiles.yml); without it Spark runs in-process."""
    db = tmp_path / "ledger.duckdb"
    duckdb.connect(str(db)).close()
    cluster = prepare_engine("spark", tmp_path, db, "spark://127.0.0.1:7077")
    assert cluster["spark_master"] == "spark://127.0.0.1:7077"
    assert "spark_master" not in prepare_engine("spark", tmp_path, db)
    assert "{{ var('spark_master', 'local[2]') }}" in (REPO_ROOT / "dbt" / "profiles.yml").read_text()


def test_duckdb_needs_no_preparation_and_no_import(tmp_path: Path) -> None:
    # Relative to the home dbt runs in: the same vars in every home (pipelines/dbt_entry.py).
    assert prepare_engine("duckdb", tmp_path, tmp_path / "ledger.duckdb") == {"ledger_db": "ledger.duckdb"}
    assert publish_engine_marts("duckdb", tmp_path, tmp_path / "ledger.duckdb") == {}
    assert list(tmp_path.iterdir()) == []
