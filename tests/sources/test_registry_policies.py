"""Registry policies the models cast to numbers: a value that is not a number is an invalid_policy reject with
its line and is left out (the default applies), never a model that fails and withholds every source."""

from __future__ import annotations

import json
from pathlib import Path

from sources.registry.workloads import parse

REGISTRY = """policies:
  observability_share: 3%
  serving_target_utilisation: 0.6
  pricing_category_factors: {on-demand: 1.0, spot: cheap}
  decisions:
    memory_margin_min_pct: 15 percent
    quality_acceptance_min: 0.9
  owned_hardware:
    pue: high
    electricity_per_kwh: "0.12"
    capex_per_gpu: {H100-SXM-80GB: 30000, A100-80GB: 15k}
    sites:
      - {site: lab, match: ["slurm:lab"]}
"""


def test_non_numbers_are_rejected_with_their_line_and_left_out(tmp_path: Path) -> None:
    path = tmp_path / "teams.yaml"
    path.write_text(REGISTRY)
    out = parse(path)
    assert [(r.line, r.rule, r.column, r.value) for r in out.rejects] == [
        (2, "invalid_policy", "observability_share", "3%"),
        (4, "invalid_policy", "pricing_category_factors.spot", "cheap"),
        (6, "invalid_policy", "decisions.memory_margin_min_pct", "15 percent"),
        (9, "invalid_policy", "owned_hardware.pue", "high"),
        (11, "invalid_policy", "owned_hardware.capex_per_gpu.A100-80GB", "15k"),
    ]
    policies = {r["policy"]: json.loads(r["value"]) for r in out.tables["registry_policies"].to_pylist()}
    assert "observability_share" not in policies  # the default (0) applies
    assert policies["serving_target_utilisation"] == 0.6
    assert policies["pricing_category_factors"] == {"on-demand": 1.0}
    assert policies["decisions"] == {"quality_acceptance_min": 0.9}
    assert policies["owned_hardware"] == {"electricity_per_kwh": "0.12", "capex_per_gpu": {"H100-SXM-80GB": 30000},
                                          "sites": [{"site": "lab", "match": ["slurm:lab"]}]}
