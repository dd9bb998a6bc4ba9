"""Every dbt test is a Dagster asset check (dagster-dbt attaches a singular test that reads several models to
the one its meta.dagster.ref names, which must be one it reads; otherwise the test silently has no check)."""

from __future__ import annotations

import json

from pipelines.dbt_project import require_manifest
from pipelines.defs.transform.assets import ledger_dbt_assets


def test_every_dbt_test_is_a_dagster_check() -> None:
    manifest = json.loads(require_manifest().read_text())
    tests = {n["name"] for n in manifest["nodes"].values() if n["resource_type"] == "test"}
    checks = {spec.name for spec in ledger_dbt_assets.check_specs}
    assert len(tests) > 100  # the project's tests, not an empty manifest
    assert sorted(tests - checks) == []
