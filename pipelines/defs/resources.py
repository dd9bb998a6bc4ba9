"""Resources shared by every area: the warehouse location and the dbt CLI."""

from __future__ import annotations

from functools import cached_property
from importlib.metadata import version as installed_version
from typing import Any

import dagster as dg
from dagster_dbt import DbtCliResource
from packaging import version

from pipelines.dbt_project import ledger_dbt, ledger_dbt_executable
from pipelines.resources import LedgerResource, refresh_lock_resource


class LedgerDbtCli(DbtCliResource):
    """dagster-dbt's CLI resource without two start-up costs this project does not use.

    - dagster-dbt learns the dbt version by running `dbt --version` in a subprocess (~3 s of imports
      on this machine); dbt-core is installed in this very environment (its entry point here is
      `gpu-ledger-dbt`, dbt started inside the home), so its package version is the answer.
    - Before each invocation it builds a dbt adapter in the Dagster process (~1.6 s: dbt config,
      adapter registration, macro parsing). That adapter only serves `fetch_row_counts()` and
      `fetch_column_metadata()`, which `ledger_dbt_assets` does not call; without it both degrade to
      a no-op, nothing else changes.
    """

    @cached_property
    def _cli_version(self) -> version.Version:
        return version.parse(installed_version("dbt-core"))

    def _initialize_dbt_core_adapter(self, args: Any) -> None:
        return None


defs = dg.Definitions(
    resources={
        "ledger": LedgerResource(),
        "refresh_lock": refresh_lock_resource,
        "dbt": LedgerDbtCli(
            project_dir=ledger_dbt, profiles_dir=str(ledger_dbt.profiles_dir), dbt_executable=ledger_dbt_executable()
        ),
    },
)
