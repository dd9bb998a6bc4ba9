"""Every dbt unit test of the project, once.

dbt unit tests check a model's SQL on literal input rows (the hand-computed chargeback, idle and
FOCUS-split cases in the `_*__models.yml` files), not the data, so the nightly build leaves them
out (`DbtBuildConfig.unit_tests`, ~30 % of the build's node time) and this test runs them all on
a copy of the sample warehouse (dbt needs the models' parents to exist). Every unit test in the
manifest must run and pass.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from pipelines.dbt_entry import DBT_LEDGER_VARS
from pipelines.dbt_project import ledger_dbt, ledger_dbt_executable
from warehouse.home import DBT_DIR


@pytest.mark.e2e
def test_every_dbt_unit_test_passes(sample_run: dict, tmp_path: Path) -> None:
    assert sample_run["ok"], sample_run["reason"]
    ledger = tmp_path / "ledger.duckdb"
    shutil.copy(sample_run["home"] / "ledger.duckdb", ledger)  # the fixture's home stays untouched
    target = tmp_path / "target"
    target.mkdir()
    # Run as the pipeline runs dbt (inside the ledger's folder, relative var): the prepared parse applies.
    shutil.copy(ledger_dbt.manifest_path.parent / "partial_parse.msgpack", target)
    done = subprocess.run(
        [ledger_dbt_executable(), "--in", str(tmp_path), "test", "--select", "test_type:unit",
         "--project-dir", str(DBT_DIR), "--profiles-dir", str(DBT_DIR), "--target-path", str(target),
         "--log-path", str(tmp_path), "--vars", json.dumps(DBT_LEDGER_VARS)],
        capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-4000:]
    results = json.loads((target / "run_results.json").read_text())["results"]
    manifest = json.loads((target / "manifest.json").read_text())
    declared = set(manifest.get("unit_tests", {}))
    ran = {r["unique_id"]: r["status"] for r in results if r["unique_id"].startswith("unit_test.")}
    assert len(declared) >= 25  # the project's hand-computed SQL cases
    assert set(ran) == declared
    assert set(ran.values()) == {"pass"}
