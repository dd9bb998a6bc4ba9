"""The dbt manifest: where it is, and `dbt parse` when it is stale, without importing Dagster.

`gpu-ledger prepare` (run by `make setup` and `make test` before anything else) only needs this: importing
dagster-dbt cost it ~4.5 s of a ~15 s set-up step. `pipelines.dbt_project` re-exports it next
to the DbtProject that dagster-dbt builds its assets with (the same manifest path: tests/test_layout.py checks it).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from pipelines.dbt_entry import DBT_LEDGER_VARS
from warehouse.home import DBT_DIR

# dagster-dbt's DbtProject reads the manifest from <project>/target/manifest.json (its default target path).
MANIFEST = DBT_DIR / "target" / "manifest.json"


def _venv_script(name: str) -> str:
    """A console script of the running virtual environment (else whatever PATH finds by that name)."""
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else name


def dbt_executable() -> str:
    """The dbt entry point of the running virtual environment."""
    return _venv_script("dbt")


def ledger_dbt_executable() -> str:
    """`gpu-ledger-dbt`: dbt started inside a warehouse home (`pipelines/dbt_entry.py` says why)."""
    return _venv_script("gpu-ledger-dbt")


# Written next to the parse: the vars it was parsed with. The partial-parse state the pipeline copies
# into every new home is only reused by dbt when these equal the vars of the home's own commands.
_PARSE_VARS_FILE = ".gpu-ledger-parse-vars.json"


def _project_mtime(folders: tuple[str, ...] = ("models", "macros", "seeds", "tests")) -> float:
    """Newest modification time of anything that changes the dbt manifest (of `folders` and the two yml)."""
    paths = [DBT_DIR / "dbt_project.yml", DBT_DIR / "profiles.yml"]
    for folder in folders:
        paths.extend((DBT_DIR / folder).rglob("*"))
    return max((p.stat().st_mtime for p in paths if p.is_file()), default=0.0)


PARTIAL_PARSE = "partial_parse.msgpack"


def project_parse() -> Path:
    """The parse `gpu-ledger prepare` leaves in the project; homes start from it. A function, not a
    constant: it follows `DBT_DIR` when a test points that elsewhere."""
    return DBT_DIR / "target" / PARTIAL_PARSE


def refresh_home_parse(target: Path) -> None:
    """Give a home's dbt target the project's parse when that is newer than the home's own (a code update).

    dbt re-parses only the nodes that call a changed macro; a model's config that a macro gives through
    `adapter.dispatch` (the incremental strategy) kept its old value in a home's partial-parse state after
    that macro changed. dagster-dbt copies the project's state only into a target that has none."""
    project, home = project_parse(), target / PARTIAL_PARSE
    if project.is_file() and home.is_file() and home.stat().st_mtime < project.stat().st_mtime:
        home.unlink()  # dagster-dbt copies the project's in


def parse_to_read(target: Path) -> Path:
    """The saved parse a dbt command writing to `target` will read: the target's own, or the project's, which
    dagster-dbt copies into a target that has none (after `refresh_home_parse`)."""
    own = target / PARTIAL_PARSE
    return own if own.is_file() else project_parse()


def parse_manifest(force: bool = False) -> Path:
    """Run `dbt parse` when the manifest is missing or older than the project (or when forced).

    This is the preparation `DbtProject.prepare_if_dev` does under `dagster dev`, done at run time
    by `gpu-ledger run` / `gpu-ledger prepare` (and `make setup`), never at import: Dagster builds
    its dbt assets from this manifest when `pipelines.definitions` is imported.
    """
    manifest = MANIFEST
    parse_vars = json.dumps(DBT_LEDGER_VARS, sort_keys=True)
    stamp = manifest.parent / _PARSE_VARS_FILE
    stale = not manifest.exists() or manifest.stat().st_mtime < _project_mtime() \
        or not stamp.is_file() or stamp.read_text() != parse_vars
    if force or stale:
        if not manifest.exists() or manifest.stat().st_mtime < _project_mtime(("macros",)):
            # a changed macro (or project or profile file): parse from scratch; refresh_home_parse says why
            # dbt's partial parse is not enough
            (manifest.parent / PARTIAL_PARSE).unlink(missing_ok=True)
        env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
        # With the pipeline's vars, so that this parse's partial_parse.msgpack serves every home.
        done = subprocess.run(
            [dbt_executable(), "parse", "--quiet", "--project-dir", str(DBT_DIR), "--profiles-dir", str(DBT_DIR),
             "--vars", parse_vars],
            check=False, cwd=DBT_DIR, env=env, capture_output=True, text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"dbt parse failed:\n{done.stdout}\n{done.stderr}")
        stamp.write_text(parse_vars)
    return manifest


def require_manifest() -> Path:
    """The parsed manifest's path; a clear error when it was never prepared (read at import time)."""
    manifest = MANIFEST
    if not manifest.exists():
        raise FileNotFoundError(
            f"dbt manifest missing at {manifest}: run `gpu-ledger prepare` (or `make setup`) once, "
            "and again after editing the dbt project"
        )
    return manifest


def load_manifest() -> dict[str, Any]:
    """The parsed manifest, parsed once per version of the file in this process and shared by every
    caller, so read it, never change it. A refresh parsed the ~3 MB file in four places besides
    dagster-dbt's own cached parse: the run's selection, the dbt results' audit, and the checks' and the
    publication's day scopes."""
    path = require_manifest()
    stat = path.stat()
    return _parsed(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=1)
def _parsed(path: str, mtime_ns: int, size: int) -> dict[str, Any]:
    """The document at `path`; the file's time and size are the cache key (a re-parse rewrites it)."""
    return json.loads(Path(path).read_bytes())
