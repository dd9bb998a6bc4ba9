"""The dbt project as dagster-dbt sees it, and the manifest it needs to build asset definitions."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from dagster_dbt import DbtProject

from warehouse.home import DBT_DIR

ledger_dbt = DbtProject(project_dir=DBT_DIR, profiles_dir=DBT_DIR)


def dbt_executable() -> str:
    """The dbt entry point of the running virtual environment."""
    candidate = Path(sys.executable).parent / "dbt"
    return str(candidate) if candidate.exists() else "dbt"


def _project_mtime() -> float:
    """Newest modification time of anything that changes the dbt manifest."""
    paths = [DBT_DIR / "dbt_project.yml", DBT_DIR / "profiles.yml"]
    for folder in ("models", "macros", "seeds", "tests"):
        paths.extend((DBT_DIR / folder).rglob("*"))
    return max((p.stat().st_mtime for p in paths if p.is_file()), default=0.0)


def parse_manifest(force: bool = False) -> Path:
    """Run `dbt parse` when the manifest is missing or older than the project (or when forced).

    This is the preparation `DbtProject.prepare_if_dev` does under `dagster dev`, done at run time
    by `gpu-ledger run` / `gpu-ledger prepare` (and `make setup`), never at import: Dagster builds
    its dbt assets from this manifest when `pipelines.definitions` is imported.
    """
    manifest = ledger_dbt.manifest_path
    if force or not manifest.exists() or manifest.stat().st_mtime < _project_mtime():
        env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
        done = subprocess.run(
            [dbt_executable(), "parse", "--quiet", "--project-dir", str(DBT_DIR), "--profiles-dir", str(DBT_DIR)],
            cwd=DBT_DIR, env=env, capture_output=True, text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"dbt parse failed:\n{done.stdout}\n{done.stderr}")
    return manifest


def require_manifest() -> Path:
    """The parsed manifest's path; a clear error when it was never prepared (read at import time)."""
    manifest = ledger_dbt.manifest_path
    if not manifest.exists():
        raise FileNotFoundError(
            f"dbt manifest missing at {manifest}: run `gpu-ledger prepare` (or `make setup`) once, "
            "and again after editing the dbt project"
        )
    return manifest
