"""Per-team chargeback/showback reports, written from the published copy after each publication."""

import dagster as dg

from pipelines.defs.publish.assets import publication
from pipelines.resources import LedgerResource
from reporting.team_reports import write_team_reports


@dg.asset(key=["serving", "team_reports"], deps=[publication], group_name="serving", kinds={"html"})
def team_reports(context: dg.AssetExecutionContext, ledger: LedgerResource) -> dg.MaterializeResult:
    """HOME/reports/<YYYY-MM>/<team>.html and .csv for every team and month of the publication."""
    written = write_team_reports(ledger.serving_path, ledger.reports_dir)
    context.log.info(f"wrote {len(written)} report files under {ledger.reports_dir}")
    return dg.MaterializeResult(metadata={"files": len(written), "folder": str(ledger.reports_dir)})


defs = dg.Definitions(assets=[team_reports])
