"""One line per stage of a refresh with the elapsed time, on stderr, also when output is piped.

A Dagster logger (`progress`) the CLI switches on through run config: it turns step start /
success / failure events into lines such as `[  12.4s] raw billing: done`, and counts the dbt
models built inside the one dbt step (`dbt build 40/90`). The full log still goes to the run log.
"""

from __future__ import annotations

import logging
import sys
import time

import dagster as dg

# Step keys of the nightly job (asset key parts joined by `__`) -> what a person calls that stage.
STAGES = {
    "landing__inputs": "landing", "fetch__prices": "fetch prices", "fetch__api_spend": "fetch API spend",
    "fetch__fx": "fetch exchange rates",
    "ledger_dbt_assets": "dbt build", "gx_suites": "great-expectations suites", "serving__publication": "publish",
    "serving__team_reports": "team reports", "serving__dbt_docs": "dbt docs",
}
DBT_STEP = "ledger_dbt_assets"
DBT_EVERY = 10  # print the dbt count every this many models (and at the end)


def stage_name(step_key: str) -> str:
    """`raw__billing` -> 'parse + load billing'; known steps by their STAGES name."""
    if step_key in STAGES:
        return STAGES[step_key]
    if step_key.startswith("raw__"):
        return f"parse + load {step_key[5:]}"
    return step_key.replace("__", " ").replace("_", " ")


class ProgressHandler(logging.Handler):
    """Writes a line per stage event; `out` defaults to the process's real stderr."""

    def __init__(self, dbt_models: int, out=None) -> None:
        super().__init__(logging.DEBUG)
        self.started = time.monotonic()
        self.dbt_models = dbt_models
        self.dbt_done = 0
        self.out = out or sys.__stderr__

    def line(self, text: str) -> None:
        self.out.write(f"[{time.monotonic() - self.started:7.1f}s] {text}\n")
        self.out.flush()

    def emit(self, record: logging.LogRecord) -> None:
        meta = getattr(record, "dagster_meta", None)
        event = meta.get("dagster_event") if isinstance(meta, dict) else None
        if event is None or not event.step_key:
            return
        kind, step = event.event_type_value, event.step_key
        if kind == "STEP_START":
            self.line(f"{stage_name(step)} ...")
        elif kind == "STEP_SUCCESS":
            self.line(f"{stage_name(step)}: done")
        elif kind == "STEP_FAILURE":
            self.line(f"{stage_name(step)}: FAILED (details in the run log)")
        elif kind == "ASSET_MATERIALIZATION" and step == DBT_STEP:
            self.dbt_done += 1
            if self.dbt_done % DBT_EVERY == 0 or self.dbt_done == self.dbt_models:
                self.line(f"dbt build {self.dbt_done}/{self.dbt_models} models")


@dg.logger(config_schema={"dbt_models": dg.Field(int, default_value=0)},
           description="One line per stage with elapsed time (gpu-ledger run).")
def progress_logger(init_context: dg.InitLoggerContext) -> logging.Logger:
    logger = logging.getLogger(f"gpu_ledger.progress.{id(init_context)}")
    logger.handlers = [ProgressHandler(init_context.logger_config["dbt_models"])]
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    return logger
