"""The warehouse home: where the working database, the published copy, landing and outputs live.

One place resolves the home (`resolve_home`) and names every path in it (`Home`). The CLI,
Dagster resources, dashboards and reports all go through here; nothing else spells a file name
of the home. Resolution happens when called, never at import.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import duckdb

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_HOME = REPO_ROOT / "warehouse" / "home"
BUNDLED_INPUTS = REPO_ROOT / "samples" / "inputs"
DBT_DIR = REPO_ROOT / "dbt"
HOME_ENV = "GPU_LEDGER_HOME"
INPUTS_ENV = "GPU_LEDGER_INPUTS"
# DuckDB's own cap on the refresh process's connections (dbt's is in dbt/profiles.yml, the same value): the
# cache of a growing ledger is evicted rather than kept, so each process stays within 2 GiB (a 365-day fleet-256
# first load peaked at 2,509 MB under 3GB; at fleet-1000-30 the refresh process peaks at 1,293-1,391 MB).
DUCKDB_MEMORY_LIMIT = "1280MiB"


class HomeError(ValueError):
    """The home path cannot hold a warehouse (e.g. it is a file)."""


def resolve_home(home: str | os.PathLike[str] | None = None) -> Path:
    """Explicit home, else GPU_LEDGER_HOME, else ./warehouse/home (absolute)."""
    value = home or os.environ.get(HOME_ENV) or DEFAULT_HOME
    return Path(value).expanduser().resolve()


def resolve_inputs(inputs: str | os.PathLike[str] | None = None) -> Path:
    """Explicit inputs folder, else GPU_LEDGER_INPUTS, else the bundled samples."""
    value = inputs or os.environ.get(INPUTS_ENV) or BUNDLED_INPUTS
    return Path(value).expanduser().resolve()


@dataclass(frozen=True)
class Home:
    """Every path of one warehouse home (see the README's table)."""

    root: Path

    @classmethod
    def at(cls, home: str | os.PathLike[str] | None = None) -> Home:
        """The home resolved as `resolve_home` does."""
        return cls(resolve_home(home))

    def check(self) -> Home:
        """This home, if its path can hold a warehouse (missing is fine; a file is not)."""
        if self.root.exists() and not self.root.is_dir():
            raise HomeError(f"warehouse home {self.root} exists and is not a folder")
        return self

    def ensure(self) -> Home:
        """Create the home folder (see `check`)."""
        self.check().root.mkdir(parents=True, exist_ok=True)
        return self

    @property
    def ledger_db(self) -> Path:
        return self.root / "ledger.duckdb"

    @property
    def serving_db(self) -> Path:
        return self.root / "serving.duckdb"

    @property
    def status_file(self) -> Path:
        return self.root / "last_refresh.json"

    @property
    def landing(self) -> Path:
        return self.root / "landing"

    @property
    def landing_hashes(self) -> Path:
        """sha256 of each input by path and stat (warehouse/landing.py), so unchanged inputs are not re-read."""
        from warehouse.landing import HASH_CACHE  # one name for it: landing keeps it beside landing/

        return self.root / HASH_CACHE

    @property
    def reports(self) -> Path:
        return self.root / "reports"

    @property
    def decisions(self) -> Path:
        return self.root / "decisions"

    @property
    def exports(self) -> Path:
        return self.root / "exports"

    @property
    def dbt_docs(self) -> Path:
        return self.root / "dbt-docs"

    @property
    def dbt_target(self) -> Path:
        """dbt's target folder for this home's builds: one per home (not one per run under dbt/), so
        the repo does not grow ~30 MB a refresh and dbt's partial parsing carries over between runs."""
        return self.root / "dbt-target"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def run_log(self) -> Path:
        return self.logs / "last_run.log"

    @property
    def lake(self) -> Path:
        return self.root / "lake"

    @property
    def spark(self) -> Path:
        return self.root / "spark"

    @property
    def dagster(self) -> Path:
        """The Dagster instance of this home (DAGSTER_HOME for `dagster dev`): runs, materializations,
        check results of every `gpu-ledger run` and scheduled run."""
        return self.root / "dagster"


def capped(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """`con` with its database capped at DUCKDB_MEMORY_LIMIT. Every DuckDB a refresh opens is a database of
    its own with its own cap, 80 % of RAM unless set: the publication's in-memory session, uncapped, took
    the refresh process to 2,481 MB in a full rebuild of a 365-day fleet-256 history."""
    con.execute(f"set memory_limit='{DUCKDB_MEMORY_LIMIT}'")
    return con


def connect_ledger(db_path: Path) -> duckdb.DuckDBPyConnection:
    """The single writer connection to the working database; close it before dbt runs."""
    con = capped(duckdb.connect(str(db_path)))
    # Load and check times (`current_timestamp::timestamp`) are compared with dbt's build stamps as
    # watermarks: both in UTC (dbt/profiles.yml sets the same), never the machine's local time, which
    # steps back an hour when daylight saving ends.
    con.execute("set TimeZone='UTC'")
    return con
