"""What a dbt command costs before its first node, three ways, in a published home.

    .venv/bin/python perf/bench_dbt_start.py --home HOME [--repeat 3]

The command is the refresh's `gpu-ledger-dbt --in HOME --run-results-only build ...` selecting no node,
so what it measures is the start alone: Python, dbt's imports, project and profile validation, the
partial parse. Per repeat:
- `afresh`: started as dagster-dbt starts it without a worker (a new Python process);
- `worker`: handed to the refresh's own warm worker (pipelines/dbt_warm.py), started first and
  listening, as it is by the time the build starts; wall is the command's, CPU includes the warm-up;
- `server imports` / `server warm`: run by the test session's warm server (tests/dbt_server.py) whose
  forked children start with dbt imported, without or with the schemas built (CPU s per child).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipelines.dbt_warm import SOCKET_NAME, dbt_env, warm_dbt
from tests import dbt_server
from warehouse.home import DBT_DIR, REPO_ROOT

GPU_LEDGER_DBT = str(Path(sys.executable).parent / "gpu-ledger-dbt")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _command(home: Path) -> list[str]:
    return [GPU_LEDGER_DBT, "--in", str(home), "--run-results-only", "build", "--log-level-file", "none",
            "--exclude-resource-type", "unit_test", "--vars", '{"ledger_db": "ledger.duckdb"}', "--select", "no_such_node"]


def afresh_or_worker(home: Path, worker: bool) -> tuple[float, float]:
    """(command wall s, CPU s of every process involved) for one command."""
    env = dbt_env(home / "dbt-target", DBT_DIR, DBT_DIR)
    c0 = _children_cpu()
    if not worker:
        t0 = time.perf_counter()
        subprocess.run(_command(home), env=env, capture_output=True, check=True)
        return time.perf_counter() - t0, _children_cpu() - c0
    with warm_dbt(home, home / "dbt-target", home / "logs" / "dbt-warm.log") as proc:
        while not (home / SOCKET_NAME).is_socket():
            time.sleep(0.05)
        t0 = time.perf_counter()
        subprocess.run(_command(home), env=env, capture_output=True, check=True)
        wall = time.perf_counter() - t0
        proc.wait(timeout=60)
    return wall, _children_cpu() - c0


def server(home: Path, schemas: bool, commands: int = 4) -> float:
    """CPU s per command of the test session's warm server, with or without the schema warm-up."""
    sock = Path(f"/tmp/bench-dbt-start-{os.getpid()}.sock")
    code = ("import sys, pathlib; import pipelines.dbt_warm as w; "
            + ("" if schemas else "w._SCHEMA_CLASSES = (); ")
            + "from tests import dbt_server; dbt_server.serve(pathlib.Path(sys.argv[1]))")
    proc = subprocess.Popen([sys.executable, "-c", code, str(sock)], cwd=REPO_ROOT)
    try:
        while not sock.exists():
            time.sleep(0.1)
        env = {**os.environ, "GPU_LEDGER_DBT_SERVER": str(sock), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
               "DBT_PROJECT_DIR": str(DBT_DIR), "DBT_PROFILES_DIR": str(DBT_DIR), "DBT_TARGET_PATH": str(home / "dbt-target")}
        for _ in range(commands):
            subprocess.run(_command(home), env=env, capture_output=True, check=True)
        while dbt_server.stats(sock).get("commands", 0) < commands:
            time.sleep(0.1)
        return dbt_server.stats(sock)["cpu_s"] / commands
    finally:
        proc.terminate()
        proc.wait()
        sock.unlink(missing_ok=True)
        dbt_server.stats_path(sock).unlink(missing_ok=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True, help="a home `gpu-ledger run` published")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    home = args.home.resolve()
    print(f"load average {os.getloadavg()[0]:.1f}")
    for _ in range(args.repeat):
        for worker in (False, True):
            wall, cpu = afresh_or_worker(home, worker)
            print(f"{'worker' if worker else 'afresh':<15}command {wall:5.2f} s wall, {cpu:5.2f} CPU s", flush=True)
        for schemas in (False, True):
            print(f"{'server ' + ('warm' if schemas else 'imports'):<15}{server(home, schemas):5.2f} CPU s per command",
                  flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
