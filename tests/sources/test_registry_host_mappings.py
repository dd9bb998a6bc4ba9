"""Registry mappings of kind host: one machine named two ways (telemetry Hostname vs scheduler node)."""

from __future__ import annotations

from pathlib import Path

from sources.registry.workloads import parse


def test_host_mapping_names_the_node_and_a_mapping_without_one_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "teams.yaml"
    path.write_text(
        "mappings:\n"
        "  - {kind: host, match: GPU-Node-01.dc1, host: gn01}\n"
        "  - {kind: host, match: gpu-node-02}\n"
        "  - {kind: namespace, match: ml, team: research}\n",
        encoding="utf-8",
    )
    out = parse(path)
    rows = out.tables["registry_mappings"].to_pylist()
    assert [(r["kind"], r["match_value"], r["target_host"], r["team_id"]) for r in rows] == [
        ("host", "gpu-node-01.dc1", "gn01", None),
        ("namespace", "ml", None, "research"),
    ]
    # The host mapping with no node is quarantined with its line and what it lacks; the others load.
    assert [(r.line, r.rule, r.message) for r in out.rejects] == [
        (3, "missing_field", "mapping needs kind, match and host")]
