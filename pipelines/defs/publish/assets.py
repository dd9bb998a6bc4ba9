"""The `publish` asset: runs only after every mart and every blocking check on it succeeded."""

from datetime import datetime, timezone
from typing import Any

import dagster as dg

from pipelines.dbt_parse import load_manifest
from pipelines.defs.transform.assets import ledger_dbt_assets
from pipelines.resources import LedgerResource, RefreshLockResource
from warehouse.publish import publish
from warehouse.publish_days import DayScope

# Every dbt model under models/marts (asset key `marts/<name>`), as the dbt assets declare them.
MART_KEYS = sorted((k for k in ledger_dbt_assets.keys if k.path[0] == "marts"), key=lambda k: k.to_user_string())


def day_scopes(nodes: dict[str, Any] | None = None) -> dict[str, DayScope]:
    """The marts published by day (dbt meta `publish_by_day`, warehouse/publish_days.py), by mart name;
    `upstream` becomes the ledger relation (schema.table) of the model it names. `nodes`: the dbt
    manifest's nodes (default: the parsed project's)."""
    if nodes is None:
        nodes = load_manifest().get("nodes", {})
    models = {n["name"]: n for n in nodes.values() if n.get("resource_type") == "model"}
    scopes = {}
    for name, node in models.items():
        spec = (node.get("meta") or {}).get("publish_by_day") or (node.get("config", {}).get("meta") or {}).get(
            "publish_by_day")
        if spec:
            up = models[spec["upstream"]]
            scopes[name] = DayScope(column=spec["column"], upstream=f"{up['schema']}.{up.get('alias') or up['name']}",
                                    upstream_day=spec["upstream_day"], stamp=spec.get("stamp", "x_built_at"),
                                    grain=spec.get("grain", "day"))
    return scopes


def run_engine(run_config: dict[str, Any]) -> str:
    """Where the run's dbt build ran. Build stamps are DuckDB's own build's: another engine's marts are
    imported whole, so nothing is published or checked by day after such a build."""
    dbt_config = ((run_config.get("ops") or {}).get("ledger_dbt_assets") or {}).get("config") or {}
    return str(dbt_config.get("engine") or "duckdb")


@dg.asset(key=["serving", "publication"], deps=MART_KEYS, group_name="serving", kinds={"duckdb"})
def publication(context: dg.AssetExecutionContext, ledger: LedgerResource,
                refresh_lock: RefreshLockResource) -> dg.MaterializeResult:
    """Copy the validated marts into serving.duckdb (new file, then atomic rename)."""
    started = datetime.fromtimestamp(context.instance.get_run_stats(context.run.run_id).start_time or 0, tz=timezone.utc)
    # A run of a subset of the assets (new inputs of some families) re-ran only their checks and
    # rebuilt only their marts: the others are copied from the publication in place.
    selection = context.run.asset_selection
    rebuilt = {k.path[-1] for k in selection if k.path[0] == "marts"} if selection else None
    by_day = day_scopes() if run_engine(context.run.run_config) == "duckdb" else None
    counts = publish(ledger.db_path, ledger.serving_path, context.run.run_id, started,
                     carry_checks=bool(selection), rebuilt=rebuilt, by_day=by_day)
    return dg.MaterializeResult(metadata={"serving_path": str(ledger.serving_path), **{
        f"rows.{k}": v for k, v in counts.items()}})


defs = dg.Definitions(assets=[publication])
