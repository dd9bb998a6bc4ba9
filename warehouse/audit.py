"""The `audit` schema: file loads, quarantined rows and check results, written by Python."""

from __future__ import annotations

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


def record_check(
    con: duckdb.DuckDBPyConnection, run_id: str, name: str, target: str, severity: str, status: str, detail: str,
    failing_rows: list[str] | None = None, rules_digest: str | None = None,
) -> None:
    """Store one check outcome for this run (replacing an earlier result of the same check and run),
    with up to a few of the rows it found (as JSON text) so a warning can be read, not just counted."""
    if status not in CHECK_STATUSES:
        raise ValueError(f"check status {status!r} is not one of {CHECK_STATUSES}")
    ensure_audit(con)
    key = [run_id, name, target]
    con.execute("delete from audit.check_results where run_id = ? and check_name = ? and target = ?", key)
    con.execute("delete from audit.check_failures where run_id = ? and check_name = ? and target = ?", key)
    con.execute(
        "insert into audit.check_results (run_id, check_name, target, severity, passed, detail, checked_at, status, "
        "rules_digest) values (?, ?, ?, ?, ?, ?, current_timestamp::timestamp, ?, ?)",
        [run_id, name, target, severity, status == "pass", detail[:2000], status, rules_digest],
    )
    if failing_rows:
        con.executemany("insert into audit.check_failures values (?, ?, ?, ?, ?)",
                        [[*key, i + 1, row[:2000]] for i, row in enumerate(failing_rows)])
