"""Recording a refresh's check outcomes against a long audit history (warehouse/audit.py).

Builds an audit schema holding `--runs` nightly runs, each with `--rows-per-run` failing rows of one warn
check (a warn test finds the same rows night after night) and `--checks` outcomes, one day apart; then
times recording one more night's outcomes check by check (a delete per check and table, as the audit
once did), all at once (`record_checks`), and the pruning of failing rows older than the days kept.

    .venv/bin/python perf/bench_audit.py --runs 365 --rows-per-run 40000 --checks 120
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import duckdb

from warehouse.audit import (
        CheckOutcome,
    ensure_audit,
    failing_rows_keep_days,
    prune_failing_rows,
    record_checks,
)
from warehouse.home import connect_ledger


def build(db: Path, runs: int, rows_per_run: int, checks: int) -> None:
    """`runs` nights of outcomes and failing rows, the newest today. Run ids are hex digests, as random as
    the pipeline's UUIDs: DuckDB's per-row-group min/max cannot skip a run's rows, as with the real ids."""
    con = connect_ledger(db)
    ensure_audit(con)
    con.execute("insert into audit.check_results (run_id, check_name, target, severity, passed, detail, checked_at, "
                "status) select md5('run-' || r), 'check-' || c, 'dbt', 'warn', c > 0, '', "
                "current_timestamp::timestamp - to_days(cast(? - 1 - r as integer)), "
                "case when c = 0 then 'warn' else 'pass' end from range(?) as a(r), range(?) as b(c)",
                [runs, runs, checks])
    con.execute("insert into audit.check_failures select md5('run-' || r), 'check-0', 'dbt', i + 1, "
                "'{\"charge\": \"' || md5(cast(i as varchar)) || '\", \"amount\": ' || i || '}' "
                "from range(?) as a(r), range(?) as b(i)", [runs, rows_per_run])
    con.close()


def per_check(con: duckdb.DuckDBPyConnection, run_id: str, outcomes: list[CheckOutcome]) -> None:
    """The former way: two deletes and an insert per outcome."""
    for o in outcomes:
        key = [run_id, o.name, o.target]
        con.execute("delete from audit.check_results where run_id = ? and check_name = ? and target = ?", key)
        con.execute("delete from audit.check_failures where run_id = ? and check_name = ? and target = ?", key)
        con.execute("insert into audit.check_results (run_id, check_name, target, severity, passed, detail, "
                    "checked_at, status) values (?, ?, ?, ?, ?, ?, current_timestamp::timestamp, ?)",
                    [*key, o.severity, o.status == "pass", o.detail, o.status])


def timed(db: Path, label: str, work: Callable[[duckdb.DuckDBPyConnection], object]) -> float:
    """Seconds `work` takes on the history at `db`, inside a transaction rolled back afterwards."""
    con = connect_ledger(db)
    con.execute("begin transaction")
    began = time.perf_counter()
    result = work(con)
    seconds = time.perf_counter() - began
    con.execute("rollback")  # every variant starts from the same history
    con.close()
    print(f"{label}: {seconds:.3f} s" + (f" ({result:,} rows)" if isinstance(result, int) else ""), flush=True)
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=365)
    ap.add_argument("--rows-per-run", type=int, default=40_000)
    ap.add_argument("--checks", type=int, default=120)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "ledger.duckdb"
        t0 = time.perf_counter()
        build(db, args.runs, args.rows_per_run, args.checks)
        print(f"history: {args.runs} runs, {args.runs * args.rows_per_run:,} failing rows, "
              f"{args.runs * args.checks:,} outcomes, built in {time.perf_counter() - t0:.1f} s", flush=True)
        run_id = hashlib.md5(b"tonight").hexdigest()
        tonight = [CheckOutcome(f"check-{c}", "dbt", "warn", "pass", "ok") for c in range(args.checks)]
        for _ in range(args.repeat):
            timed(db, f"{args.checks} outcomes, check by check", lambda con: per_check(con, run_id, tonight))
            timed(db, f"{args.checks} outcomes, record_checks", lambda con: record_checks(con, run_id, tonight))
        timed(db, f"prune_failing_rows (keep {failing_rows_keep_days()} days), the first time", prune_failing_rows)
        con = connect_ledger(db)
        prune_failing_rows(con)
        con.close()
        timed(db, "prune_failing_rows the next night (nothing older left)", prune_failing_rows)


if __name__ == "__main__":
    main()
