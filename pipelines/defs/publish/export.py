"""The FOCUS 1.3 export, written from the published copy after each publication when enabled.

Disabled by default so the nightly stays fast; enable it in the run config:

    ops:
      serving__focus_export:
        config: {enabled: true, format: parquet}
"""

import dagster as dg

from pipelines.defs.publish.assets import publication
from pipelines.resources import LedgerResource
from warehouse.export import export_focus


class FocusExportConfig(dg.Config):
    enabled: bool = False
    format: str = "parquet"


@dg.asset(key=["serving", "focus_export"], deps=[publication], group_name="serving", kinds={"parquet"})
def focus_export(context: dg.AssetExecutionContext, ledger: LedgerResource,
                 config: FocusExportConfig) -> dg.MaterializeResult:
    """HOME/exports/focus/focus_<YYYY-MM>.parquet (or .csv): fct_focus_export of the publication, one file per
    billing period, when `enabled` (default off)."""
    folder = ledger.paths.exports / "focus"
    if not config.enabled:
        context.log.info("FOCUS export disabled (run config serving__focus_export.config.enabled: true)")
        return dg.MaterializeResult(metadata={"enabled": False, "files": 0})
    written = export_focus(ledger.serving_path, folder, fmt=config.format)
    context.log.info(f"wrote {len(written)} FOCUS 1.3 files under {folder}")
    return dg.MaterializeResult(metadata={"enabled": True, "files": len(written), "folder": str(folder)})


defs = dg.Definitions(assets=[focus_export])
