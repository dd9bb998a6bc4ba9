"""Dagster resources: the warehouse home and the inputs folder, configured per run.

The CLI passes both as run config (`resources.ledger.config`); `dagster dev` and the schedule
resolve them from GPU_LEDGER_HOME / GPU_LEDGER_INPUTS when the run starts. Nothing is read at
import time and nothing writes the process environment.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


@dg.resource(required_resource_keys={"ledger"}, config_schema={
    "held_by_caller": dg.Field(bool, default_value=False, description="the starting process holds the lock"),
    "wait_s": dg.Field(float, default_value=0.0, description="seconds to wait for a running refresh"),
})
def refresh_lock_resource(context: Any) -> Iterator[None]:
    """The home's refresh lock (warehouse/refresh_lock.py), held for the whole run by every asset that
    writes the ledger, so a run the Dagster daemon or UI starts (the nightly schedule, the drop-folder
    sensor) and `gpu-ledger run` never write one home at once: whichever comes second is refused
    with the holder's pid and start time before it touches anything. (A function resource: it reads
    the run's configured `ledger` resource for the home.)

    `held_by_caller`: the process starting the run holds the lock already (`gpu-ledger run` takes it
    before deciding whether there is anything to do); a second flock of it would refuse the run itself."""
    if context.resource_config["held_by_caller"]:
        yield None
        return
    from warehouse.refresh_lock import refresh_lock

    with refresh_lock(context.resources.ledger.home_dir, wait_s=context.resource_config["wait_s"]):
        yield None


#: How an asset asks for the lock (the resource yields nothing; holding it is the point).
RefreshLockResource = dg.ResourceParam[None]
