"""The `audit` schema: file loads, quarantined rows and check results, written by Python."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

DDL = """
create schema if not exists audit;
create table if not exists audit.file_loads (
    file_hash varchar, family varchar, format varchar, source_file varchar, origin varchar,
    observed_at timestamp, rows_loaded bigint, rejects bigint, status varchar, message varchar,
    run_id varchar, loaded_at timestamp
);
-- Credentials redacted at load (sources/secrets.py): how many cells, in which table.column.
alter table audit.file_loads add column if not exists redactions bigint;
alter table audit.file_loads add column if not exists redacted_columns varchar;
create table if not exists audit.dq_rejects (
    source_family varchar, format varchar, file_hash varchar, file_name varchar, line bigint,
    column_name varchar, value varchar, rule varchar, message varchar, first_seen timestamp, run_id varchar
);
create table if not exists audit.check_results (
    run_id varchar, check_name varchar, target varchar, severity varchar, passed boolean,
    detail varchar, checked_at timestamp
);
alter table audit.check_results add column if not exists status varchar;
-- The digest of the rules a dbt test derived from yml (column_constraints: its compiled SQL's
-- `/* check rules: <md5> */`): a pass counts for a nightly scope only under the same rules.
alter table audit.check_results add column if not exists rules_digest varchar;
create table if not exists audit.check_failures (
    run_id varchar, check_name varchar, target varchar, row_number bigint, failing_row varchar
);
"""


def ensure_audit(con: duckdb.DuckDBPyConnection) -> None:
    """Create the audit tables if missing."""
    con.execute(DDL)


# A check's outcome. `warn`: a warn-level check found rows (published, shown as a warning, never
# counted as passed); `fail`: a blocking check found rows (no publication); `error`: it could not run.
CHECK_STATUSES = ("pass", "warn", "fail", "error")


def check_status(severity: str, ok: bool, ran: bool = True) -> str:
    """The status of a check that ran (or not) and found nothing (ok) or something at this severity."""
    if not ran:
        return "error"
    if ok:
        return "pass"
    return "warn" if severity == "warn" else "fail"


@dataclass(frozen=True)
class CheckOutcome:
    """One check's outcome in a run, as `record_checks` stores it."""

    name: str
    target: str
    severity: str
    status: str
    detail: str
    failing_rows: Sequence[str] = ()  # up to a few of the rows it found, as JSON text
    rules_digest: str | None = None


def record_check(
    con: duckdb.DuckDBPyConnection, run_id: str, name: str, target: str, severity: str, status: str, detail: str,
    failing_rows: list[str] | None = None, rules_digest: str | None = None,
) -> None:
    """Store one check outcome for this run (replacing an earlier result of the same check and run),
    with up to a few of the rows it found (as JSON text) so a warning can be read, not just counted."""
    record_checks(con, run_id, [CheckOutcome(name, target, severity, status, detail, failing_rows or (), rules_digest)])


def record_checks(con: duckdb.DuckDBPyConnection, run_id: str, outcomes: Sequence[CheckOutcome]) -> None:
    """`record_check` for many outcomes of one run, in four statements whatever their number.

    The replaced results are deleted in one pass over each table, not one pass per check: a refresh
    records ~60-220 outcomes, and audit.check_failures holds the rows of every run kept. On a 365-day
    fleet-256 ledger after 15 refreshes (613,125 failing rows), 120 outcomes took 0.10-0.30 s check by
    check and 0.004 s at once (perf/bench_audit.py measures it on a generated history)."""
    for o in outcomes:
        if o.status not in CHECK_STATUSES:
            raise ValueError(f"check status {o.status!r} is not one of {CHECK_STATUSES}")
    if not outcomes:
        return
    ensure_audit(con)
    names, targets = [o.name for o in outcomes], [o.target for o in outcomes]
    for table in ("check_results", "check_failures"):
        con.execute(f"delete from audit.{table} as a where a.run_id = ? and exists (select 1 from "
                    "(select unnest(?::varchar[]) as check_name, unnest(?::varchar[]) as target) as k "
                    "where k.check_name = a.check_name and k.target = a.target)", [run_id, names, targets])
    con.execute(
        "insert into audit.check_results (run_id, check_name, target, severity, passed, detail, checked_at, status, "
        "rules_digest) select ?, unnest(?::varchar[]), unnest(?::varchar[]), unnest(?::varchar[]), "
        "unnest(?::boolean[]), unnest(?::varchar[]), current_timestamp::timestamp, unnest(?::varchar[]), "
        "unnest(?::varchar[])",
        [run_id, names, targets, [o.severity for o in outcomes], [o.status == "pass" for o in outcomes],
         [o.detail[:2000] for o in outcomes], [o.status for o in outcomes], [o.rules_digest for o in outcomes]],
    )
    rows = [(o.name, o.target, i + 1, row[:2000]) for o in outcomes for i, row in enumerate(o.failing_rows)]
    if rows:
        columns = [list(c) for c in zip(*rows)]
        con.execute("insert into audit.check_failures select ?, unnest(?::varchar[]), unnest(?::varchar[]), "
                    "unnest(?::bigint[]), unnest(?::varchar[])", [run_id, *columns])


# How long audit.check_failures keeps the rows a check found, by the time of the run that found them.
# A check's rows from its latest run that found any are kept whatever their age. A warn test finds the
# same rows night after night (a FOCUS check of the generated 365-day fleet ~40,000 a run): without a
# limit the table, every publication's read of it and every recorded check's delete grew with the nights.
FAILING_ROWS_KEEP_DAYS = 35
KEEP_DAYS_VAR = "GPU_LEDGER_FAILING_ROWS_KEEP_DAYS"  # overrides it


def failing_rows_keep_days() -> int:
    """The days audit.check_failures keeps: GPU_LEDGER_FAILING_ROWS_KEEP_DAYS, else FAILING_ROWS_KEEP_DAYS."""
    raw = os.environ.get(KEEP_DAYS_VAR, str(FAILING_ROWS_KEEP_DAYS)).strip()
    if not raw.isdigit():
        raise ValueError(f"{KEEP_DAYS_VAR} must be a whole number of days (0 or more), got {raw!r}")
    return int(raw)


def prune_failing_rows(con: duckdb.DuckDBPyConnection, keep_days: int | None = None) -> int:
    """Delete the failing rows of runs older than `keep_days` days (default `failing_rows_keep_days()`; by
    their checks' latest `checked_at`), except each check's rows from the latest run that recorded any;
    returns the rows deleted. The outcomes (audit.check_results) stay: the record of what was checked when."""
    keep_days = failing_rows_keep_days() if keep_days is None else keep_days
    ensure_audit(con)
    return con.execute(
        """
        delete from audit.check_failures as f
        where exists (
            select 1
            from (
                select found.run_id, found.check_name, found.target, runs.checked_at,
                       row_number() over (partition by found.check_name, found.target
                                          order by runs.checked_at desc) as recency
                from (select distinct run_id, check_name, target from audit.check_failures) as found
                inner join (select run_id, max(checked_at) as checked_at from audit.check_results
                            group by run_id) as runs on runs.run_id = found.run_id
            ) as old
            where old.recency > 1 and old.checked_at < current_timestamp::timestamp - to_days(cast(? as integer))
              and old.run_id = f.run_id and old.check_name = f.check_name and old.target = f.target
        )
        """,
        [keep_days],
    ).fetchone()[0]
