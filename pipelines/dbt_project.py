"""The dbt project as dagster-dbt sees it; the manifest it needs (`pipelines.dbt_parse`, re-exported).

dagster-dbt is imported here first, without dbt-core (`import_dagster_dbt`): when dbt-core is
importable, dagster-dbt imports it into the Dagster process (dbt's adapters, contracts and their
dependencies, ~1.1 CPU s of every refresh) and evaluates the default selection of `@dbt_assets`
with dbt's own selector on a Manifest it builds. This project runs every dbt command in its own
process (`gpu-ledger-dbt`, pipelines/dbt_warm.py), selects every node of the manifest, and does not
use dagster-dbt's in-process adapter (pipelines/defs/resources.py), so dagster-dbt is given the path
it supports for a dbt engine it cannot import: the statuses and node types it compares are plain
strings, and "every node" is read from the manifest. The definitions are the same either way
(tests/pipeline/test_definitions.py).
"""

from __future__ import annotations

import sys

from pipelines.dbt_parse import (
    MANIFEST,
    dbt_executable,
    ledger_dbt_executable,
    load_manifest,
    parse_manifest,
    require_manifest,
)
from warehouse.home import DBT_DIR

DBT_VERSION_MODULE = "dbt.version"  # what dagster-dbt imports to learn whether dbt-core is there


def import_dagster_dbt() -> None:
    """Import dagster-dbt with dbt-core out of its sight, unless either is imported already (then
    it is used as it is). Only the first import looks: dbt itself stays importable for anything
    else in the process."""
    if "dagster_dbt" in sys.modules or DBT_VERSION_MODULE in sys.modules:
        return
    sys.modules[DBT_VERSION_MODULE] = None  # type: ignore[assignment]  # an import of it raises ImportError
    try:
        import dagster_dbt  # noqa: F401
    finally:
        if sys.modules.get(DBT_VERSION_MODULE, False) is None:
            del sys.modules[DBT_VERSION_MODULE]


import_dagster_dbt()

from dagster_dbt import DbtProject  # noqa: E402 - after the import above decided how dagster-dbt sees dbt

ledger_dbt = DbtProject(project_dir=DBT_DIR, profiles_dir=DBT_DIR)

__all__ = ["MANIFEST", "dbt_executable", "import_dagster_dbt", "ledger_dbt", "ledger_dbt_executable",
           "load_manifest", "parse_manifest", "require_manifest"]
