"""The `publish` asset: runs only after every mart and every blocking check on it succeeded."""


import json
from datetime import datetime, timezone

import dagster as dg

from pipelines.dbt_project import parse_manifest
from warehouse.publish import publish
from warehouse.status import write_status
from pipelines.resources import LedgerResource


def mart_keys() -> list[dg.AssetKey]:
    """Asset keys of every dbt model under models/marts (read from the parsed manifest)."""
    # This module may load before the dbt assets module: make sure a manifest exists first.
    manifest = json.loads(parse_manifest().read_text())
    return sorted(
        (dg.AssetKey([n["schema"], n["name"]]) for n in manifest["nodes"].values()
         if n["resource_type"] == "model" and n["path"].startswith("marts")),
        key=lambda k: k.to_user_string(),
    )


@dg.asset(key=["serving", "publication"], deps=mart_keys(), group_name="serving", kinds={"duckdb"})
def publication(context: dg.AssetExecutionContext, ledger: LedgerResource) -> dg.MaterializeResult:
    """Copy the validated marts into serving.duckdb (new file, then atomic rename)."""
    started = datetime.fromtimestamp(context.instance.get_run_stats(context.run_id).start_time or 0, tz=timezone.utc)
    counts = publish(ledger.db_path, ledger.serving_path, context.run_id, started)
    write_status(ledger.home_dir, True, context.run_id, f"published {len(counts)} tables")
    return dg.MaterializeResult(metadata={"serving_path": str(ledger.serving_path), **{
        f"rows.{k}": v for k, v in counts.items()}})


defs = dg.Definitions(assets=[publication])
