"""Resources shared by every area: the warehouse location and the dbt CLI."""

from __future__ import annotations

import dagster as dg
from dagster_dbt import DbtCliResource

from pipelines.dbt_project import dbt_executable, ledger_dbt
from pipelines.resources import LedgerResource

defs = dg.Definitions(
    resources={
        "ledger": LedgerResource(),
        "dbt": DbtCliResource(
            project_dir=ledger_dbt, profiles_dir=str(ledger_dbt.profiles_dir), dbt_executable=dbt_executable()
        ),
    },
)
