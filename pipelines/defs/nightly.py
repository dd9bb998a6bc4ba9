"""The nightly job (every asset, in process: DuckDB has one writer anyway) and its schedule."""

from __future__ import annotations

import os

import dagster as dg

from pipelines.progress import progress_logger

# The schedule is code-location configuration, read when definitions load (not a secret or path).
NIGHTLY_CRON = os.environ.get("GPU_LEDGER_NIGHTLY_CRON", "0 2 * * *")

nightly_job = dg.define_asset_job(
    "nightly",
    selection=dg.AssetSelection.all(),
    executor_def=dg.in_process_executor,
    description="Full refresh: land -> raw -> dbt build (tests) -> checks -> publish.",
)

nightly_schedule = dg.ScheduleDefinition(
    job=nightly_job, cron_schedule=NIGHTLY_CRON, execution_timezone="UTC", name="nightly_refresh",
)

# `console` is Dagster's default; `progress` prints stage lines when the CLI switches it on.
defs = dg.Definitions(jobs=[nightly_job], schedules=[nightly_schedule],
                      loggers={"console": dg.colored_console_logger, "progress": progress_logger})
