"""The `publish` asset: runs only after every mart and every blocking check on it succeeded."""

from datetime import datetime, timezone

import dagster as dg

from pipelines.defs.transform.assets import ledger_dbt_assets
from pipelines.resources import LedgerResource, RefreshLockResource
from warehouse.publish import publish

# Every dbt model under models/marts (asset key `marts/<name>`), as the dbt assets declare them.
MART_KEYS = sorted((k for k in ledger_dbt_assets.keys if k.path[0] == "marts"), key=lambda k: k.to_user_string())


@dg.asset(key=["serving", "publication"], deps=MART_KEYS, group_name="serving", kinds={"duckdb"})
def publication(context: dg.AssetExecutionContext, ledger: LedgerResource,
                refresh_lock: RefreshLockResource) -> dg.MaterializeResult:
    """Copy the validated marts into serving.duckdb (new file, then atomic rename)."""
    started = datetime.fromtimestamp(context.instance.get_run_stats(context.run.run_id).start_time or 0, tz=timezone.utc)
    # A run of a subset of the assets (new inputs of some families) re-ran only their checks and
    # rebuilt only their marts: the others are copied from the publication in place.
    selection = context.run.asset_selection
    rebuilt = {k.path[-1] for k in selection if k.path[0] == "marts"} if selection else None
    counts = publish(ledger.db_path, ledger.serving_path, context.run.run_id, started,
                     carry_checks=bool(selection), rebuilt=rebuilt)
    return dg.MaterializeResult(metadata={"serving_path": str(ledger.serving_path), **{
        f"rows.{k}": v for k, v in counts.items()}})


defs = dg.Definitions(assets=[publication])
