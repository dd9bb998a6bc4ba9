"""Landing and raw loads: `landing/inputs`, then one `raw/<family>` asset per source family."""


import dagster as dg

from pipelines.resources import LedgerResource, RefreshLockResource
from sources.catalog import FAMILIES
from warehouse.ingest import ingest_family
from warehouse.landing import land_inputs


@dg.asset(key=["landing", "inputs"], group_name="landing", kinds={"python"})
def landing_inputs(context: dg.AssetExecutionContext, ledger: LedgerResource,
                   refresh_lock: RefreshLockResource) -> dg.MaterializeResult:
    """Copy every input file into the content-addressed landing zone (same bytes: no-op)."""
    seen, new = land_inputs(ledger.inputs_dir, ledger.landing_dir, FAMILIES)
    context.log.info(f"landed {new} new of {seen} input files from {ledger.inputs_dir}")
    return dg.MaterializeResult(metadata={"files_seen": seen, "files_new": new, "inputs": str(ledger.inputs_dir)})


# Families whose pages are also fetched (pipelines/defs/ingest/fetch.py) load after the fetch.
FETCHED = {"prices": dg.AssetKey(["fetch", "prices"]), "api_spend": dg.AssetKey(["fetch", "api_spend"]),
           "fx": dg.AssetKey(["fetch", "fx"])}


def _raw_asset(family: str) -> dg.AssetsDefinition:
    key = dg.AssetKey(["raw", family])

    @dg.asset(
        key=key,
        deps=[landing_inputs, *([FETCHED[family]] if family in FETCHED else [])],
        group_name="raw",
        kinds={"duckdb"},
        description=f"Parse and load every landed {family} file not loaded yet into raw.* (idempotent per file).",
        check_specs=[dg.AssetCheckSpec("all_files_readable", asset=key,
                                       description="every landed file was recognised and parsed")],
    )
    def _load(context: dg.AssetExecutionContext, ledger: LedgerResource, refresh_lock: RefreshLockResource):
        con = ledger.connect()
        try:
            summary = ingest_family(con, family, ledger.landing_dir, context.run.run_id)
        finally:
            con.close()
        for problem in summary.problems:
            context.log.warning(problem)
        for warning in summary.warnings:  # parser notes on files that loaded (also in audit.file_loads)
            context.log.info(warning)
        yield dg.MaterializeResult(metadata={
            "files_new": summary.files_seen, "files_loaded": summary.files_loaded,
            "rows_loaded": summary.rows_loaded, "rejects": summary.rejects,
            "problems": "\n".join(summary.problems) or "none",
            "parser_warnings": "\n".join(summary.warnings)[:4000] or "none",
        })
        # An unreadable file is quarantined, never fatal to the other files or families.
        yield dg.AssetCheckResult(
            check_name="all_files_readable", passed=not summary.problems,
            severity=dg.AssetCheckSeverity.WARN,
            metadata={"problems": "\n".join(summary.problems) or "none"},
        )

    _load.__name__ = f"raw_{family}"
    return _load


RAW_ASSETS = [_raw_asset(f) for f in FAMILIES]

defs = dg.Definitions(assets=[landing_inputs, *RAW_ASSETS])
