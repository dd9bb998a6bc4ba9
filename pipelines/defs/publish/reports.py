"""Per-team chargeback/showback reports, written from the published copy after each publication."""

import dagster as dg

from pipelines.defs.publish.assets import publication
from pipelines.resources import LedgerResource
from reporting.team_reports import write_team_reports


@dg.asset(key=["serving", "team_reports"], deps=[publication], group_name="serving", kinds={"html"})
def team_reports(context: dg.AssetExecutionContext, ledger: LedgerResource) -> dg.MaterializeResult:
    """HOME/reports/<YYYY-MM>/<team>.html and .csv for every team and month with any cost in the chargeback or
    the all-in showback, and HOME/reports/index.html linking them all."""
    written = write_team_reports(ledger.serving_path, ledger.reports_dir)
    index = ledger.reports_dir / "index.html"
    reports = [p for p in written if p.suffix == ".html" and p != index]
    context.log.info(f"wrote {len(reports)} team reports ({len(written)} files) under {ledger.reports_dir}, "
                     f"index: {index}")
    return dg.MaterializeResult(metadata={"files": len(written), "reports": len(reports),
                                          "index": str(index),
                                          "folder": str(ledger.reports_dir)})


defs = dg.Definitions(assets=[team_reports])
