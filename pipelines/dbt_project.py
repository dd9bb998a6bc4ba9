"""The dbt project as dagster-dbt sees it; the manifest it needs (`pipelines.dbt_parse`, re-exported)."""

from __future__ import annotations

from dagster_dbt import DbtProject

from pipelines.dbt_parse import (
    MANIFEST,
    dbt_executable,
    ledger_dbt_executable,
    parse_manifest,
    require_manifest,
)
from warehouse.home import DBT_DIR

ledger_dbt = DbtProject(project_dir=DBT_DIR, profiles_dir=DBT_DIR)

__all__ = ["MANIFEST", "dbt_executable", "ledger_dbt", "ledger_dbt_executable", "parse_manifest", "require_manifest"]
