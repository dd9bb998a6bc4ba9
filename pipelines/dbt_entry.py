"""`gpu-ledger-dbt [--in DIR] <dbt arguments>`: dbt itself, started from inside DIR.

Why: dbt reuses its parse of the project (`<target>/partial_parse.msgpack`) only while the
profile renders the same connection values and the same `--vars`; any difference means a parse from
scratch (8.5 s on this machine, against 4.3 s for a whole partial-parse start). The ledger's location
reaches dbt's profile as a var, so an absolute path made every warehouse home parse the project once
more. The pipeline therefore runs dbt inside the home and gives it the ledger as the relative path
`ledger.duckdb` (`DBT_LEDGER_VARS`): every home renders the same profile, and a new home starts from
the parse `gpu-ledger prepare` left in `dbt/target` (dagster-dbt copies it into the home's target).
The project and profiles folders are passed as absolute paths, so the working directory changes only
what the relative ledger path means.

With GPU_LEDGER_DBT_SERVER set, the command runs in a warm dbt process instead of this one
(`pipelines/dbt_server.py`: dbt already imported, ~2 CPU s less per command); same command, same
streams, same exit code. Without it, a command `--in` a home where `gpu-ledger run` started its own
warm dbt worker goes to that worker (`pipelines/dbt_warm.py`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

# The vars every in-home dbt command passes (build, docs, and the parse `gpu-ledger prepare` runs):
# same string everywhere, so dbt's partial-parse state check matches across homes.
DBT_LEDGER_VARS: dict[str, str] = {"ledger_db": "ledger.duckdb"}


# `gpu-ledger-dbt [--in DIR] --run-results-only <dbt command>`: the command without dbt's JSON artifacts
# (`--no-write-json`), then run_results.json alone, where dbt writes it. dbt writes manifest.json twice per
# command (after the parse and again at the end): ~3 of ~25 CPU s of a sample-home build started afresh, ~1.5
# of ~20 in the test session's warm dbt process. A home's build reads nothing
# but run_results.json (dagster-dbt and the audit table); the manifest Dagster builds its assets from is the
# one `gpu-ledger prepare` wrote in dbt/target.
RUN_RESULTS_ONLY = "--run-results-only"


def _target_path() -> Path:
    """Where the last dbt invocation of this process writes its artifacts (as dbt resolves it)."""
    from dbt.flags import get_flags

    flags = get_flags()
    project = Path(getattr(flags, "PROJECT_DIR", None) or ".")
    return project / (getattr(flags, "TARGET_PATH", None) or "target")


def stop_spark(stop_context: bool = True, grace_s: float = 60.0) -> None:
    """End the Spark driver JVM this process started (dbt-spark's session mode) and reap it; nothing
    when it started none.

    pyspark starts the JVM as this process's child with a pipe on its stdin, and the JVM exits when
    that pipe closes. Left to this process's exit, the JVM outlived dbt (reparented to init, its CPU
    counted by nobody). So: stop the SparkContext (a cluster releases the application's executors),
    close the pipe, wait for the JVM. `stop_context=False` skips the py4j call (from a signal handler
    or a watcher thread, where dbt's own calls may hold the gateway): the JVM's shutdown hook stops it."""
    module = sys.modules.get("pyspark.core.context") or sys.modules.get("pyspark.context")
    if module is None:
        return
    context, gateway = module.SparkContext._active_spark_context, module.SparkContext._gateway
    if stop_context and context is not None:
        with contextlib.suppress(Exception):  # a JVM already gone: closing the pipe below still reaps it
            context.stop()
    proc = getattr(gateway, "proc", None)
    if proc is None:
        return
    with contextlib.suppress(OSError, ValueError):
        proc.stdin.close()
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def close_duckdb() -> None:
    """Checkpoint and close the DuckDB database dbt-duckdb opened in this process; nothing when none is open.

    dbt-duckdb closes its database only when its last cursor closes, and a dbt command leaves cursors
    open: the database closes at interpreter exit, or never when the process ends by `os._exit` (the warm
    worker). The night's changes then stayed in the write-ahead log: on a next day at 256 GPUs x 30 days
    the refresh's next connection took 0.77 s to replay it and its first commit 0.78 s to checkpoint it.
    Checkpointing here writes them once (0.72 s in dbt), and the refresh's dbt stage took 5.8-6.0 s
    instead of 6.4-6.7 s."""
    module = sys.modules.get("dbt.adapters.duckdb.connections")
    env = getattr(getattr(module, "DuckDBConnectionManager", None), "_ENV", None)
    conn = getattr(env, "conn", None)
    if conn is None:
        return
    with contextlib.suppress(Exception):  # a failed build's open transaction: the log stays, as before
        conn.execute("checkpoint")
    with contextlib.suppress(Exception):
        env.close()


def _end_by(signum: int, _frame: object) -> None:
    """SIGTERM or SIGHUP: end the Spark driver, then end by the signal as a dbt process would."""
    stop_spark(stop_context=False)
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def run_dbt(args: list[str]) -> int:
    """dbt's CLI on `args` in this process; dbt's exit code (0 done, 1 failures, 2 unhandled error).
    The Spark driver JVM dbt started ends with the command (`stop_spark`), also on SIGTERM or SIGHUP."""
    previous: dict[int, object] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(signum) is signal.SIG_DFL:  # someone else's handler stays theirs
                previous[signum] = signal.signal(signum, _end_by)
    try:
        return _run_dbt(args)
    finally:
        close_duckdb()
        stop_spark()
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _run_dbt(args: list[str]) -> int:
    from pipelines.dbt_contexts import fast_macro_namespaces, shared_type_testers
    from pipelines.dbt_events import cheap_flag_sources, lazy_event_messages, skip_unlogged_events

    skip_unlogged_events()  # dbt formats each debug event and then drops it: not any more
    lazy_event_messages()  # ... and had converted its fields to a protobuf message before that
    cheap_flag_sources()  # dbt read a source line per stack frame for each behaviour flag of each command
    fast_macro_namespaces()  # each node's contexts bind every macro of the manifest
    shared_type_testers()  # each statement's empty result built agate's type tester
    if args[:1] == [RUN_RESULTS_ONLY]:
        from dbt.cli.main import dbtRunner  # dbt's programmatic entry: the same command, its result kept

        done = dbtRunner().invoke([*args[1:], "--no-write-json"])
        if hasattr(done.result, "write"):
            path = _target_path() / "run_results.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            done.result.write(str(path))
        if done.exception is not None:  # exit code 2, as dbt's CLI; a usage error is not in dbt's log: say it
            print(f"dbt: {done.exception!r}", file=sys.stderr)
            return 2
        return 0 if done.success else 1
    from dbt.cli.main import cli  # here, not at the top: the pipeline imports DBT_LEDGER_VARS without dbt

    try:
        cli(args=args, prog_name="dbt")  # click ends with SystemExit carrying dbt's exit code
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            return done.code or 0
        print(done.code, file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> None:
    """Change into `--in DIR` (when given first), then hand the remaining arguments to dbt."""
    args = list(sys.argv[1:] if argv is None else argv)
    warm = None
    if args[:1] == ["--in"]:
        if len(args) < 2:
            sys.exit("gpu-ledger-dbt: --in needs a folder")
        os.chdir(args[1])
        args = args[2:]
        from pipelines.dbt_warm import socket_in

        warm = socket_in(Path.cwd())  # the refresh's own dbt worker, already warm (pipelines/dbt_warm.py)
    from pipelines.dbt_server import run_in_server

    code = run_in_server(args, str(warm) if warm else None)
    if code is None:
        code = run_dbt(args)
    sys.exit(code)


if __name__ == "__main__":
    main()
