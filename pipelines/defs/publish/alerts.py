"""Spend alerts, raised from the published copy after each publication (warehouse/alerts.py)."""

import os

import dagster as dg

from pipelines.defs.publish.assets import publication
from pipelines.resources import LedgerResource
from warehouse.alerts import WEBHOOK_ENV, ledger_path, raise_alerts


@dg.asset(key=["serving", "alerts"], deps=[publication], group_name="serving", kinds={"json"})
def alerts(context: dg.AssetExecutionContext, ledger: LedgerResource) -> dg.MaterializeResult:
    """New anomalies and forecast budget breaches, each posted once to GPU_LEDGER_WEBHOOK_URL (when set);
    every alert is recorded in HOME/alerts.json. An unreachable webhook is logged, never fatal."""
    outcome = raise_alerts(ledger.home_dir, ledger.serving_path, os.environ.get(WEBHOOK_ENV), context.log)
    context.log.info(f"alerts: {outcome.current} open, {outcome.new} new, {outcome.posted} posted, "
                     f"{outcome.failed} failed posts")
    return dg.MaterializeResult(metadata={"open": outcome.current, "new": outcome.new, "posted": outcome.posted,
                                          "failed": outcome.failed, "ledger": str(ledger_path(ledger.home_dir))})


defs = dg.Definitions(assets=[alerts])
