"""dagster-dbt is imported without dbt-core in the Dagster process (pipelines/dbt_project.py), and the
definitions it builds are the same as with dbt-core in sight.

Each side loads the definitions in a fresh interpreter: one as every refresh and `dagster dev` do,
one with dbt imported first (dagster-dbt then evaluates the selection with dbt's own selector).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROBE = """
import json, sys
if sys.argv[1] == "dbt-first":
    import dbt.version  # noqa: F401
from pipelines.definitions import defs
graph = defs.resolve_asset_graph()
assets = {k.to_user_string(): sorted(p.to_user_string() for p in graph.get(k).parent_keys)
          for k in graph.get_all_asset_keys()}
checks = sorted(f"{k.asset_key.to_user_string()}:{k.name}:{graph.get_check_spec(k).blocking}"
                for k in graph.asset_check_keys)
print(json.dumps({"dbt_imported": "dbt" in sys.modules, "assets": assets, "checks": checks}))
"""


def _definitions(mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, mode], cwd=REPO, capture_output=True, text=True,
                         check=True, timeout=300)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_definitions_load_without_dbt_core_and_equal_those_with_it() -> None:
    lean, full = _definitions("lean"), _definitions("dbt-first")
    assert lean["dbt_imported"] is False  # dbt's imports stay out of the Dagster process
    assert full["dbt_imported"] is True
    assert len(lean["assets"]) > 100 and len(lean["checks"]) > 100
    assert lean["assets"] == full["assets"]
    assert lean["checks"] == full["checks"]
