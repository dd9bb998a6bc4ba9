"""Check titles in words from the dbt test's meta (title, counts) in its config."""

from __future__ import annotations

import json

from pipelines.check_titles import check_title
from pipelines.dbt_project import require_manifest


def _node(name: str) -> dict:
    nodes = json.loads(require_manifest().read_text())["nodes"]
    return next(n for n in nodes.values() if n["resource_type"] == "test" and n["name"] == name)


def test_a_warning_is_titled_from_its_meta() -> None:
    node = _node("assert_bill_not_above_list_price")
    assert check_title(node, "warn", 6, "Got 6 results, configured to warn if != 0") == \
        "Bill above list price: 6 GPU bill lines"
    assert check_title(node, "pass", 0) == "Bill above list price"
    assert check_title(node, "error", None, "relation missing") == "Bill above list price: could not run (relation missing)"


def test_every_singular_warning_has_a_title() -> None:
    nodes = json.loads(require_manifest().read_text())["nodes"].values()
    warn = [n for n in nodes if n["resource_type"] == "test" and not n.get("test_metadata")
            and n["config"].get("severity", "").lower() == "warn"]
    assert len(warn) >= 10
    untitled = [n["name"] for n in warn if not {"title", "counts"} <= set(n["config"].get("meta", {}))]
    assert untitled == []


def test_a_generic_test_is_named_by_model_and_column() -> None:
    node = {"name": "not_null_fct_x_team_id", "attached_node": "model.gpu_ledger.fct_x", "column_name": "team_id",
            "test_metadata": {"name": "not_null", "kwargs": {"column_name": "team_id"}}, "config": {"meta": {}}}
    assert check_title(node, "fail", 3) == "fct_x.team_id: not null: 3 rows"


def test_one_thing_is_singular() -> None:
    assert check_title(_node("assert_gpu_prices_fresh_per_provider"), "warn", 1) == "GPU prices stale or undated: 1 provider"
