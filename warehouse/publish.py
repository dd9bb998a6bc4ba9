"""Publication: copy the validated marts into a new file and rename it over serving.duckdb.

Readers never see a half-written file: the copy is built beside the target and swapped in with
an atomic rename. A failed refresh leaves the last good copy and records why in
`last_refresh.json`, which the dashboard shows next to the publication time.

A refresh that rebuilt only what its new inputs affect starts the new file as a byte copy of the
publication in place and rewrites only the marts it rebuilt (and the small bookkeeping tables): a
mart it left as it was is already there, sorted. Writing a table through DuckDB costs per row and
column (~30 ms per column of a 26k-row FOCUS table, compressed again on write); the file copy costs
a sequential read and write of the file, at disk speed. A rebuilt mart its dbt model rebuilds by day
(fct_focus_export) has only its changed days replaced in the copy (warehouse/publish_days.py). So the
publication follows what changed, not the size of the history.
"""

from __future__ import annotations

import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

import duckdb

from warehouse.home import capped
from warehouse.publish_days import DayScope, changed_days, previous_ledger_as_of, replace_days

PUBLISHED_SCHEMAS = ("marts",)


def published_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Tables of the published schemas in the working database, sorted."""
    rows = con.execute(
        "select table_name from information_schema.tables where table_catalog = 'ledger' and table_schema in ? "
        "and table_type = 'BASE TABLE' order by table_name",
        [list(PUBLISHED_SCHEMAS)],
    ).fetchall()
    return [r[0] for r in rows]


def check_counts(con: duckdb.DuckDBPyConnection, run_id: str, catalog: str = "ledger") -> dict[str, int]:
    """Checks of a run by status, plus `blocking_failed` (an error-severity check that did not pass)."""
    row = con.execute(
        f"select count(*), count(*) filter (where status = 'pass'), count(*) filter (where status = 'warn'), "
        f"count(*) filter (where status = 'fail'), count(*) filter (where status = 'error'), "
        f"count(*) filter (where status in ('fail', 'error') and severity = 'error') "
        f"from {catalog}.audit.check_results where run_id = ?", [run_id]
    ).fetchone()
    return dict(zip(("run", "pass", "warn", "fail", "error", "blocking_failed"), row))


def previous_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Tables of the publication in place (attached as `previous`)."""
    return [r[0] for r in con.execute(
        "select table_name from information_schema.tables where table_catalog = 'previous' "
        "and table_schema = 'main' and table_type = 'BASE TABLE'").fetchall()]


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def sort_order(con: duckdb.DuckDBPyConnection, relation: str) -> str:
    """The ORDER BY of a published copy: `all` (every column, left to right), or just the first column when
    no two rows share its value and it has no NULL -- then no later column ever breaks a tie, so the rows
    come out in exactly the order `order by all` gives, byte for byte, without a sort key built from every
    column (a 78-column FOCUS export: ~0.1 of the ~1.3 CPU s its copy costs; writing it is the rest). The
    check that the first column is such a key is one scan of that column."""
    first = con.execute(f"select * from {relation} limit 0").description[0][0]
    col = _q(first)
    unique = con.execute(f"select count({col}) = count(*) and count(distinct {col}) = count(*) "
                         f"from {relation}").fetchone()[0]
    return col if unique else "all"


CHECK_RESULTS_SQL = ("select check_name, target, severity, status, status = 'pass' as passed, detail "
                     "from ledger.audit.check_results where run_id = $run")
CHECK_FAILURES_SQL = ("select check_name, target, row_number, failing_row from ledger.audit.check_failures "
                      "where run_id = $run")
# A check of this run replaces the previous publication's outcome of the same check (name and target).
NOT_RUN_NOW = ("where not exists (select 1 from ledger.audit.check_results c where c.run_id = $run "
               "and c.check_name = p.check_name and c.target = p.target)")


def publish(db_path: Path, serving_path: Path, run_id: str, started_at: datetime,
            carry_checks: bool = False, rebuilt: set[str] | None = None,
            by_day: dict[str, DayScope] | None = None) -> dict[str, int]:
    """Write serving.duckdb from the working database; returns rows per published table.

    `carry_checks`: the run rebuilt only what its new inputs affect (pipelines/refresh_state.py), so
    the checks of the tables it left as they were did not run again; their outcomes are carried over
    from the publication in place, and the copy lists every check as a full refresh does.
    `rebuilt` (with `carry_checks`): the marts that run rebuilt; every other mart is the one the
    publication in place was written from, so the new file starts as a byte copy of that publication
    and keeps those marts' tables as they are (sorted already, not written again); only the rebuilt marts
    and the bookkeeping tables are replaced. None: every mart is written from the working database.
    `by_day` (with `rebuilt`): the rebuilt marts published by day, and how (warehouse/publish_days.py):
    only their days that changed since the publication in place are replaced in the copy."""
    # read before the ledger is: a day stamped after this was built after this publication read it
    ledger_as_of = datetime.now(timezone.utc).replace(tzinfo=None)
    tmp = serving_path.with_name(f".{serving_path.name}.{os.getpid()}.tmp")
    _remove_stale_temp_copies(serving_path)  # this process's own leftovers too, before writing
    carry = carry_checks and serving_path.exists()
    if carry and rebuilt is not None:
        # the publication in place is a closed, checkpointed file (written by this function, renamed in)
        shutil.copyfile(serving_path, tmp)
    # An in-memory session attaches the ledger read-only and the new file read-write.
    con = capped(duckdb.connect())
    counts: dict[str, int] = {}
    try:
        con.execute("set TimeZone = 'UTC'")  # build stamps and ledger_as_of are naive UTC
        con.execute(f"attach '{db_path}' as ledger (read_only)")
        if carry:
            con.execute(f"attach '{serving_path}' as previous (read_only)")
        con.execute(f"attach '{tmp}' as serving")
        marts = published_tables(con)
        in_place = set(previous_tables(con)) if carry else set()
        kept = in_place.intersection(marts) - set(rebuilt or ()) if carry and rebuilt is not None else set()
        days: dict[str, list] = {}  # rebuilt marts whose changed days are replaced in the copy
        as_of = previous_ledger_as_of(con) if carry and rebuilt is not None and by_day else None
        for table in sorted(in_place.intersection(marts, rebuilt or (), by_day or ())) if as_of else ():
            found = changed_days(con, table, by_day[table], as_of)
            if found is not None:
                days[table] = found
        # the copy's other tables (rebuilt marts, bookkeeping, a mart no longer built) are written anew;
        # a checkpoint returns their blocks to the file's free list before the new tables are written, so
        # the file does not grow night after night
        for (table,) in con.execute("select table_name from information_schema.tables where table_catalog = "
                                    "'serving' and table_schema = 'main' and table_type = 'BASE TABLE'").fetchall():
            if table not in kept and table not in days:
                con.execute(f'drop table serving.main."{table}"')
        con.execute("checkpoint serving")
        for table in marts:
            if table in days:
                replace_days(con, table, by_day[table], days[table], sort_order)
            elif table not in kept:  # sorted so the same inputs always give byte-identical contents
                con.execute(f'create table serving.main."{table}" as select * from ledger.marts."{table}" '
                            f'order by {sort_order(con, f"ledger.marts.{_q(table)}")}')
            counts[table] = con.execute(f'select count(*) from serving.main."{table}"').fetchone()[0]
        con.execute(
            "create table serving.main.dq_rejects as select * exclude (run_id) from ledger.audit.dq_rejects order by all"
        )
        counts["dq_rejects"] = con.execute("select count(*) from serving.main.dq_rejects").fetchone()[0]
        # Every file as loaded, with the credentials redacted from it (Data quality page).
        con.execute(
            "create table serving.main.source_files as select family, format, source_file, status, observed_at, "
            "rows_loaded, rejects, coalesce(redactions, 0) as redactions, redacted_columns "
            "from ledger.audit.file_loads order by all"
        )
        counts["source_files"] = con.execute("select count(*) from serving.main.source_files").fetchone()[0]
        results, failures = CHECK_RESULTS_SQL, CHECK_FAILURES_SQL
        if carry:
            results += f" union all select * from previous.main.check_results p {NOT_RUN_NOW}"
            failures += f" union all select * from previous.main.check_failures p {NOT_RUN_NOW}"
        con.execute(f"create table serving.main.check_results as {results} order by all", {"run": run_id})
        con.execute(f"create table serving.main.check_failures as {failures} order by all", {"run": run_id})
        if carry:
            con.execute("detach previous")
        blocking = check_counts(con, run_id)["blocking_failed"]
        if blocking:
            raise RuntimeError(f"{blocking} blocking checks failed in run {run_id}; not publishing")
        checks = dict(zip(("run", "pass", "warn", "fail"), con.execute(
            "select count(*), count(*) filter (where status = 'pass'), count(*) filter (where status = 'warn'), "
            "count(*) filter (where status in ('fail', 'error')) from serving.main.check_results").fetchone()))
        published_at = datetime.now(timezone.utc).replace(tzinfo=None)
        con.execute(
            "create table serving.main.publication as select ?::varchar as run_id, ?::timestamp as started_at, "
            "?::timestamp as published_at, ?::bigint as checks_run, ?::bigint as checks_passed, "
            "?::bigint as checks_warned, ?::bigint as checks_failed, ?::varchar as tables_published, "
            "?::timestamp as ledger_as_of",
            [run_id, started_at.replace(tzinfo=None), published_at, checks["run"], checks["pass"], checks["warn"],
             checks["fail"], ",".join(sorted(counts)), ledger_as_of],
        )
        con.execute("detach serving")
        con.execute("detach ledger")
    except Exception:
        con.close()
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            leftover.unlink(missing_ok=True)
        raise
    con.close()
    _swap_into_place(tmp, serving_path)
    return counts


def _remove_stale_temp_copies(serving_path: Path) -> None:
    """A publish killed before its rename leaves `.serving.duckdb.<pid>.tmp` and DuckDB's write-ahead
    log beside it, `.serving.duckdb.<pid>.tmp.wal`. Both are removed when their pid is this process
    (a WAL left under the name this publish is about to use would be replayed into the new copy) or
    no longer runs; a live process's are another publish at work."""
    prefix = f".{serving_path.name}."
    for old in serving_path.parent.glob(f"{prefix}*.tmp*"):
        pid, _, suffix = old.name[len(prefix):].partition(".")
        if not pid.isdigit() or suffix not in ("tmp", "tmp.wal"):
            continue
        if int(pid) == os.getpid() or not _alive(int(pid)):
            old.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's live process
    return True


def _swap_into_place(tmp: Path, target: Path) -> None:
    """The atomic rename that publishes: readers see the old file or the new one, never a mix."""
    os.replace(tmp, target)
