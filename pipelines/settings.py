"""Where the warehouse lives and where inputs come from, resolved at run time (never at import)."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
import duckdb

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_HOME = REPO_ROOT / "warehouse" / "home"
BUNDLED_INPUTS = REPO_ROOT / "samples" / "inputs"
DBT_DIR = REPO_ROOT / "dbt"
# DuckDB's own cap keeps a refresh inside the 4 GiB budget on small machines.
DUCKDB_MEMORY_LIMIT = "3GB"


def resolve_home(home: str | os.PathLike[str] | None = None) -> Path:
    """Explicit home, else GPU_LEDGER_HOME, else ./warehouse/home (absolute)."""
    value = home or os.environ.get("GPU_LEDGER_HOME") or DEFAULT_HOME
    return Path(value).expanduser().resolve()


def resolve_inputs(inputs: str | os.PathLike[str] | None = None) -> Path:
    """Explicit inputs folder, else GPU_LEDGER_INPUTS, else the bundled samples."""
    value = inputs or os.environ.get("GPU_LEDGER_INPUTS") or BUNDLED_INPUTS
    return Path(value).expanduser().resolve()


class LedgerResource(dg.ConfigurableResource):
    """The warehouse home and the inputs folder. Empty strings mean: resolve from the environment."""

    home: str = ""
    inputs: str = ""

    @property
    def home_dir(self) -> Path:
        path = resolve_home(self.home or None)
        path.mkdir(parents=True, exist_ok=True)
        return path

    @property
    def inputs_dir(self) -> Path:
        return resolve_inputs(self.inputs or None)

    @property
    def db_path(self) -> Path:
        return self.home_dir / "ledger.duckdb"

    @property
    def serving_path(self) -> Path:
        return self.home_dir / "serving.duckdb"

    @property
    def landing_dir(self) -> Path:
        return self.home_dir / "landing"

    @property
    def reports_dir(self) -> Path:
        return self.home_dir / "reports"

    def connect(self) -> duckdb.DuckDBPyConnection:
        """The single writer connection to the working database; close it before dbt runs."""
        con = duckdb.connect(str(self.db_path))
        con.execute(f"set memory_limit='{DUCKDB_MEMORY_LIMIT}'")
        return con
