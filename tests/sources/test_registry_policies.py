"""Registry policies the models cast to numbers: a value that is not a number is an invalid_policy reject with
its line and is left out (the default applies), never a model that fails and withholds every source."""

from __future__ import annotations

import json
from pathlib import Path

from sources.registry.workloads import parse

REGISTRY = """policies:
  observability_share: 3%
  fx_lookback_days: 4.5
  serving_target_utilisation: .nan
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
        (3, "invalid_policy", "fx_lookback_days", "4.5"),  # the model casts it to whole days
        (4, "invalid_policy", "serving_target_utilisation", "nan"),  # YAML's .nan: a float, no number
        (5, "invalid_policy", "pricing_category_factors.spot", "cheap"),
        (7, "invalid_policy", "decisions.memory_margin_min_pct", "15 percent"),
        (10, "invalid_policy", "owned_hardware.pue", "high"),
        (12, "invalid_policy", "owned_hardware.capex_per_gpu.A100-80GB", "15k"),
    ]
    assert out.rejects[1].message == "policy fx_lookback_days = 4.5 is not a whole number; the default applies"
    policies = {r["policy"]: json.loads(r["value"]) for r in out.tables["registry_policies"].to_pylist()}
    assert "observability_share" not in policies and "fx_lookback_days" not in policies  # the defaults apply
    assert "serving_target_utilisation" not in policies
    assert policies["pricing_category_factors"] == {"on-demand": 1.0}
    assert policies["decisions"] == {"quality_acceptance_min": 0.9}
    assert policies["owned_hardware"] == {"electricity_per_kwh": "0.12", "capex_per_gpu": {"H100-SXM-80GB": 30000},
                                          "sites": [{"site": "lab", "match": ["slurm:lab"]}]}
