"""Dagster resources: the warehouse home and the inputs folder, configured per run.

The CLI passes both as run config (`resources.ledger.config`); `dagster dev` and the schedule
resolve them from GPU_LEDGER_HOME / GPU_LEDGER_INPUTS when the run starts. Nothing is read at
import time and nothing writes the process environment.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb

from warehouse.home import Home, connect_ledger, resolve_home, resolve_inputs


class LedgerResource(dg.ConfigurableResource):
    """The warehouse home and the inputs folder. Empty strings mean: resolve from the environment."""

    home: str = ""
    inputs: str = ""

    @property
    def paths(self) -> Home:
        """The home's layout (created if missing)."""
        return Home(resolve_home(self.home or None)).ensure()

    @property
    def home_dir(self) -> Path:
        return self.paths.root

    @property
    def inputs_dir(self) -> Path:
        return resolve_inputs(self.inputs or None)

    @property
    def db_path(self) -> Path:
        return self.paths.ledger_db

    @property
    def serving_path(self) -> Path:
        return self.paths.serving_db

    @property
    def landing_dir(self) -> Path:
        return self.paths.landing

    @property
    def reports_dir(self) -> Path:
        return self.paths.reports

    def connect(self) -> duckdb.DuckDBPyConnection:
        """The single writer connection to the working database; close it before dbt runs."""
        return connect_ledger(self.db_path)
