"""The dbt project as dagster-dbt sees it, and the manifest it needs to build asset definitions."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from dagster_dbt import DbtProject

from pipelines.settings import DBT_DIR

ledger_dbt = DbtProject(project_dir=DBT_DIR, profiles_dir=DBT_DIR)


def dbt_executable() -> str:
    """The dbt entry point of the running virtual environment."""
    candidate = Path(sys.executable).parent / "dbt"
    return str(candidate) if candidate.exists() else "dbt"


def parse_manifest(force: bool = False) -> Path:
    """Run `dbt parse` when the manifest is missing (or when forced), so definitions can load.

    This is the same preparation `DbtProject.prepare_if_dev` does under `dagster dev`, made
    unconditional for a fresh clone and for the CLI.
    """
    manifest = ledger_dbt.manifest_path
    if force or not manifest.exists():
        env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
        done = subprocess.run(
            [dbt_executable(), "parse", "--quiet", "--project-dir", str(DBT_DIR), "--profiles-dir", str(DBT_DIR)],
            cwd=DBT_DIR, env=env, capture_output=True, text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"dbt parse failed:\n{done.stdout}\n{done.stderr}")
    return manifest
