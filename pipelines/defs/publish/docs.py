"""dbt docs for the warehouse just refreshed, written to HOME/dbt-docs/ after each publication.

`dbt docs generate` opens the working database to build its catalog, so it runs after the
publication (never while publication reads the file). Docs are a convenience: when they cannot
be generated the asset logs why and says so in its metadata, and the refresh still succeeds.
"""

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import dagster as dg

from pipelines.dbt_project import dbt_executable, require_manifest
from pipelines.defs.publish.assets import publication
from pipelines.resources import LedgerResource
from warehouse.home import DBT_DIR

DOCS_FILES = ("index.html", "manifest.json", "catalog.json")
DOCS_TIMEOUT_S = 600


def generate_docs(db_path: Path, out_dir: Path) -> tuple[bool, str]:
    """Run `dbt docs generate` into a temporary target and copy the site files to `out_dir`."""
    with tempfile.TemporaryDirectory(prefix="gpu-ledger-dbt-docs-") as tmp:
        env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
        # The parsed manifest the build ran from is reused (--no-compile): no second compile of every
        # model (issue 23: 12.0 s -> 8.2 s on an idle machine); the catalog is read from the database.
        shutil.copyfile(require_manifest(), Path(tmp) / "manifest.json")
        cmd = [dbt_executable(), "docs", "generate", "--no-compile", "--project-dir", str(DBT_DIR),
               "--profiles-dir", str(DBT_DIR), "--target-path", tmp, "--log-path", tmp,
               "--vars", json.dumps({"ledger_db": str(db_path)})]
        try:
            done = subprocess.run(cmd, cwd=DBT_DIR, env=env, capture_output=True, text=True,
                                  timeout=DOCS_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, f"dbt docs generate did not run: {exc}"
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            return False, f"dbt docs generate failed (exit {done.returncode}):\n{tail}"
        missing = [n for n in DOCS_FILES if not (Path(tmp) / n).is_file()]
        if missing:
            return False, f"dbt docs generate wrote no {', '.join(missing)}"
        out_dir.mkdir(parents=True, exist_ok=True)
        for name in DOCS_FILES:
            part = out_dir / f".{name}.part"
            shutil.copyfile(Path(tmp) / name, part)
            part.replace(out_dir / name)  # a reader never sees a half-copied file
    return True, f"wrote {', '.join(DOCS_FILES)}"


@dg.asset(key=["serving", "dbt_docs"], deps=[publication], group_name="serving", kinds={"dbt"})
def dbt_docs(context: dg.AssetExecutionContext, ledger: LedgerResource) -> dg.MaterializeResult:
    """HOME/dbt-docs/: index.html, manifest.json, catalog.json of the refreshed warehouse."""
    out_dir = ledger.paths.dbt_docs
    ok, message = generate_docs(ledger.db_path, out_dir)
    if ok:
        context.log.info(f"dbt docs: {message} in {out_dir}")
    else:
        context.log.warning(f"dbt docs not updated (the publication stands): {message}")
    return dg.MaterializeResult(metadata={"generated": ok, "folder": str(out_dir), "message": message})


defs = dg.Definitions(assets=[dbt_docs])
