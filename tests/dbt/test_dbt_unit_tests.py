"""Every dbt unit test of the project, once.

dbt unit tests check a model's SQL on literal input rows (the hand-computed chargeback, idle and
FOCUS-split cases in the `_*__models.yml` files), not the data, so the nightly build leaves them
out (`DbtBuildConfig.unit_tests`, ~30 % of the build's node time) and this test runs them all on
a copy of the sample warehouse (dbt needs the models' parents to exist). Every unit test in the
manifest (the one `gpu-ledger prepare` wrote, which this command's parse starts from) must run and pass.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.dbt_project import ledger_dbt
from tests.dbt.ledger_nodes import copy_ledger, run_nodes


@pytest.mark.e2e
def test_every_dbt_unit_test_passes(sample_run: dict, tmp_path: Path) -> None:
    assert sample_run["ok"], sample_run["reason"]
    ledger = copy_ledger(sample_run["home"], tmp_path / "home")  # the fixture's home stays untouched
    statuses, out = run_nodes(ledger, "test", "--select", "test_type:unit", target=tmp_path / "target")
    declared = set(json.loads(ledger_dbt.manifest_path.read_text()).get("unit_tests", {}))
    ran = {u: s for u, s in statuses.items() if u.startswith("unit_test.")}
    assert len(declared) >= 25  # the project's hand-computed SQL cases
    assert set(ran) == declared, out[-4000:]
    assert set(ran.values()) == {"pass"}, out[-4000:]
