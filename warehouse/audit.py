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
create table if not exists audit.dq_rejects (
    source_family varchar, format varchar, file_hash varchar, file_name varchar, line bigint,
    column_name varchar, value varchar, rule varchar, message varchar, first_seen timestamp, run_id varchar
);
create table if not exists audit.check_results (
    run_id varchar, check_name varchar, target varchar, severity varchar, passed boolean,
    detail varchar, checked_at timestamp
);
"""


def ensure_audit(con: duckdb.DuckDBPyConnection) -> None:
    """Create the audit tables if missing."""
    con.execute(DDL)


def record_check(
    con: duckdb.DuckDBPyConnection, run_id: str, name: str, target: str, severity: str, passed: bool, detail: str
) -> None:
    """Store one check outcome for this run (replacing an earlier result of the same check and run)."""
    ensure_audit(con)
    con.execute("delete from audit.check_results where run_id = ? and check_name = ? and target = ?",
                [run_id, name, target])
    con.execute(
        "insert into audit.check_results values (?, ?, ?, ?, ?, ?, current_timestamp::timestamp)",
        [run_id, name, target, severity, passed, detail[:2000]],
    )
