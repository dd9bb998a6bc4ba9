"""Which models a refresh of some families' new files rebuilds through `audit.file_loads`.

Every loaded file adds a row to audit.file_loads; a model reading it used to be downstream of every
new file (76 of 119 models rebuilt when a day of telemetry arrived). A model that declares the
families whose rows it reads (dbt meta `audit_families`) is rebuilt only when one of them changed.
"""

import json

import dagster as dg

from pipelines.definitions import defs
from pipelines.dbt_parse import require_manifest
from pipelines.refresh_state import affected_assets

AUDIT_MODEL = "model.gpu_ledger.stg_audit__file_loads"


def _keys(families: list[str]) -> set[str]:
    return {k.to_user_string() for k in affected_assets(defs, families)}


def test_every_reader_of_file_loads_declares_its_families() -> None:
    """An undeclared reader is rebuilt for every new file (safe, but the cost this removes)."""
    nodes = json.loads(require_manifest().read_text())["nodes"]
    readers = {uid: n.get("meta", {}).get("audit_families") for uid, n in nodes.items()
               if n["resource_type"] == "model" and AUDIT_MODEL in n["depends_on"]["nodes"]}
    assert "model.gpu_ledger.stg_registry__teams" in readers
    # An empty list is a declaration: a model reading only the latest load time (its watermark) runs
    # when a model upstream of it changed, not for a family's files.
    assert all(fams is not None for fams in readers.values()), \
        [uid for uid, fams in readers.items() if fams is None]
    assert any(readers.values())


def test_a_day_of_usage_and_api_spend_leaves_registry_and_billing_models_alone() -> None:
    keys = _keys(["usage", "api_spend"])
    # the day's own chain and what follows it
    for rebuilt in ("staging/stg_audit__file_loads", "intermediate/int_gpu_telemetry_hourly",
                    "intermediate/int_gpu_usage_hourly", "marts/fct_chargeback_monthly", "serving/publication"):
        assert rebuilt in keys, rebuilt
    # they read only registry / billing rows of file_loads, and no usage or api_spend row reaches them
    for kept in ("staging/stg_registry__teams", "staging/stg_registry__mappings",
                 "intermediate/int_billing_charges_current", "marts/dim_team", "marts/ledger_focus"):
        assert kept not in keys, kept
    assert "raw/registry" not in keys and "raw/billing" not in keys


def test_a_registry_edit_rebuilds_what_the_registry_reaches() -> None:
    keys = _keys(["registry"])
    for rebuilt in ("staging/stg_registry__teams", "marts/dim_team", "intermediate/int_gpu_usage_hourly"):
        assert rebuilt in keys, rebuilt
    # the telemetry fold reads usage files' rows of file_loads only, and no registry row
    assert "intermediate/int_gpu_telemetry_hourly" not in keys
    assert "staging/stg_usage__gpu_samples" not in keys


def test_a_reader_runs_when_a_family_it_declares_changed() -> None:
    from pipelines.refresh_state import audit_readers

    graph = defs.resolve_asset_graph()
    audit = [dg.AssetKey(["staging", "stg_audit__file_loads"])]
    nodes = json.loads(require_manifest().read_text())["nodes"]

    def declared(key: dg.AssetKey) -> list[str] | None:
        uid = graph.get(key).metadata["dagster_dbt/unique_id"]
        return nodes[str(getattr(uid, "value", uid))]["meta"].get("audit_families")

    families = {"registry", "billing", "usage", "api_spend"}
    every = {k for k in graph.get(audit[0]).child_keys
             if declared(k) is None or families.intersection(declared(k))}
    # the readers of the latest load time alone (an empty declaration) run for no family's files
    priced = dg.AssetKey(["intermediate", "int_gpu_work_priced"])
    assert declared(priced) == [] and priced not in every
    assert set(audit_readers(graph, audit, sorted(families))) == every
    assert set(audit_readers(graph, audit, ["fx"])) == set()
    assert dg.AssetKey(["intermediate", "int_workload_cost_lines"]) in audit_readers(graph, audit, ["prices"])


def test_a_reader_that_declares_nothing_runs_for_any_family() -> None:
    from pipelines.refresh_state import audit_readers

    graph = defs.resolve_asset_graph()
    audit = [dg.AssetKey(["staging", "stg_audit__file_loads"])]
    nodes = json.loads(require_manifest().read_text())["nodes"]
    del nodes["model.gpu_ledger.stg_registry__teams"]["meta"]["audit_families"]
    assert audit_readers(graph, audit, ["fx"], nodes) == [dg.AssetKey(["staging", "stg_registry__teams"])]
