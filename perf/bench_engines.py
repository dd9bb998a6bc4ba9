"""The same dbt project on each engine: build time of the bundled samples on DuckDB and on Spark.

    .venv/bin/python perf/bench_engines.py [--home /tmp/gpu-ledger-engines] [--inputs DIR]

Steps: (1) one DuckDB refresh of the inputs (landing + raw loads; reused when the home exists);
(2) `dbt build --full-refresh` on DuckDB, timed; (3) the Spark preparation (Parquet export of the
raw layer), timed; (4) `dbt build --target spark` (session mode, fresh warehouse), timed, which
includes starting the JVM; (5) the import of Spark's marts and the comparison with DuckDB's.
Prints seconds per step and the dbt nodes built. Needs Java 17.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipelines.dbt_project import ledger_dbt_executable
from pipelines.engines import prepare_engine, publish_engine_marts
from tests.compare import compare_marts
from warehouse.home import BUNDLED_INPUTS, DBT_DIR


def dbt_build(home: Path, dbt_vars: dict[str, str], *args: str) -> tuple[float, int, int]:
    """Seconds, nodes that succeeded, nodes that did not, for one `dbt build` run inside `home` (as the
    pipeline runs it: the profile reads the ledger and the Spark folders from `dbt_vars`, never the environment)."""
    t0 = time.perf_counter()
    env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    done = subprocess.run([ledger_dbt_executable(), "--in", str(home), "build", "--project-dir", str(DBT_DIR),
                           "--profiles-dir", str(DBT_DIR), "--target-path", str(DBT_DIR / "target-bench"),
                           "--vars", json.dumps(dbt_vars, sort_keys=True), *args],
                          env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t0
    results = json.loads((DBT_DIR / "target-bench" / "run_results.json").read_text())["results"]
    ok = sum(r["status"] in ("success", "pass", "warn") for r in results)
    if done.returncode != 0:
        print(done.stdout[-3000:])
    return seconds, ok, len(results) - ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, default=Path("/tmp/gpu-ledger-engines"))
    ap.add_argument("--inputs", type=Path, default=BUNDLED_INPUTS)
    args = ap.parse_args()
    home, db = args.home, args.home / "ledger.duckdb"
    if not db.exists():
        from pipelines.cli import execute_refresh

        ok, _, reason = execute_refresh(home, args.inputs)
        assert ok, reason
    try:
        duck_s, duck_ok, duck_bad = dbt_build(home, prepare_engine("duckdb", home, db), "--full-refresh")
        reference = home / "ledger_duckdb_marts.duckdb"
        shutil.copy(db, reference)
        t0 = time.perf_counter()
        spark_vars = prepare_engine("spark", home, db)
        export_s = time.perf_counter() - t0
        spark_s, spark_ok, spark_bad = dbt_build(home, spark_vars, "--target", "spark", "--exclude-resource-type",
                                                 "unit_test")
        t0 = time.perf_counter()
        imported = publish_engine_marts("spark", home, db)
        import_s = time.perf_counter() - t0
        diffs = compare_marts(reference, db)
    finally:
        shutil.rmtree(DBT_DIR / "target-bench", ignore_errors=True)
    equal = sum(d.equal for d in diffs)
    print(f"{'engine':<8}{'step':<34}{'seconds':>9}{'nodes ok':>10}{'failed':>8}")
    print(f"{'duckdb':<8}{'dbt build --full-refresh':<34}{duck_s:>9.1f}{duck_ok:>10}{duck_bad:>8}")
    print(f"{'spark':<8}{'export raw layer to Parquet':<34}{export_s:>9.1f}")
    print(f"{'spark':<8}{'dbt build --target spark':<34}{spark_s:>9.1f}{spark_ok:>10}{spark_bad:>8}")
    print(f"{'spark':<8}{'import marts into the ledger':<34}{import_s:>9.1f}{len(imported):>10}")
    print(f"marts equal to the DuckDB build (to the cent): {equal} of {len(diffs)}; "
          f"rows compared: {sum(d.row_counts[0] for d in diffs):,}")


if __name__ == "__main__":
    main()
