"""great-expectations suites as Dagster asset checks, one check per suite in warehouse/expectations/.

Raw suites attach to `raw/<family>`, mart suites to `marts/<table>`. A blocking suite's check is
`blocking=True` with ERROR severity: when it fails, nothing downstream of its asset runs in that
refresh, `serving/publication` included. The others are WARN: the publication goes ahead and the
failure is listed on the dashboard's data-quality page. Every outcome is stored in
audit.check_results, which the publication copies.

All suites run in one op (a multi-asset check): one great-expectations context and one database
connection instead of one step per suite, which is most of their cost on small tables.

A refresh of what new inputs affect (pipelines/refresh_state.py) runs the suites of the raw tables of
the changed families and of the marts it rebuilt; the others' outcomes are carried over from the
publication in place (warehouse/publish.py). A raw suite that passed there validates only the rows of
the files loaded in this run (plus every row sharing a unique key with one of them): the earlier rows
are the same rows it passed before, and every rule but uniqueness is about one row at a time, so the
outcome is the one a suite over the whole table would have. A suite that did not pass there validates
its whole table, as a full refresh does. At 256 GPUs x 30 days that is 0.37M of 11M telemetry rows.
Likewise a mart published by day (dbt meta `publish_by_day`: fct_focus_export) whose suite passed
there validates the rows of the days its upstream rebuilt since the suite last passed (their build
stamps, warehouse/publish_days.py): any other day's rows are the ones that suite passed.
"""

from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import duckdb

from pipelines.defs.publish.assets import day_scopes, run_engine
from pipelines.resources import LedgerResource, RefreshLockResource
from warehouse.audit import CheckOutcome, check_status, record_checks
from warehouse.expectations import SUITES, Suite, run_suite
from warehouse.home import capped
from warehouse.publish_days import DayScope, days_stamped_since

SPECS = [
    dg.AssetCheckSpec(
        suite.check_name,
        asset=dg.AssetKey(list(suite.key)),
        blocking=suite.blocking,
        description=(f"great-expectations suite on {suite.target} ({len(suite.expectations)} expectations, "
                     f"{'blocking' if suite.blocking else 'warning'})"),
    )
    for suite in SUITES
]


def _result(suite: Suite, passed: bool, failures: list[str], meta: dict) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        asset_key=dg.AssetKey(list(suite.key)),
        check_name=suite.check_name,
        passed=passed,
        severity=dg.AssetCheckSeverity.ERROR if suite.blocking else dg.AssetCheckSeverity.WARN,
        metadata={
            "table": suite.target,
            "expectations": len(suite.expectations),
            "expectations_run": meta.get("expectations_run", "n/a"),
            "rows": meta.get("rows", 0),
            "rows_validated": meta.get("rows_validated", 0),
            "sampled": meta.get("sampled", "n/a"),
            "scope": meta.get("scope") or "the whole table",
            "missing_columns": meta.get("missing_columns") or "none",
            "seconds": float(meta.get("seconds", 0.0)),
            "failures": "\n".join(failures) or "none",
        },
    )


def passed_checks(serving_path: Path) -> set[tuple[str, str]]:
    """(check name, target) of every check that passed in the publication in place (none without one)."""
    if not serving_path.exists():
        return set()
    con = duckdb.connect(str(serving_path), read_only=True)
    try:
        return set(con.execute("select check_name, target from check_results where status = 'pass'").fetchall())
    except duckdb.Error:  # a publication without check results: nothing to build on
        return set()
    finally:
        con.close()


def loaded_files(con: duckdb.DuckDBPyConnection, run_id: str) -> list[str]:
    """Hashes of the landed files this run loaded (their rows carry it as `_file_hash`)."""
    return sorted({r[0] for r in con.execute(
        "select file_hash from audit.file_loads where run_id = ?", [run_id]).fetchall()})


def rebuilt_rows(con: duckdb.DuckDBPyConnection, suite: Suite, scopes: dict[str, DayScope],
                 passed_before: set[tuple[str, str]]) -> tuple[str, str] | None:
    """The rows of a mart published by day that its suite reads (a predicate, and what it selects): those of
    the days rebuilt since the suite last passed; None (every row) for another suite, or one that did not
    pass in the publication in place."""
    scope = scopes.get(suite.table) if suite.schema == "marts" else None
    if scope is None or (suite.check_name, suite.target) not in passed_before:
        return None
    since = con.execute("select max(checked_at) from audit.check_results where check_name = ? and target = ? "
                        "and status = 'pass'", [suite.check_name, suite.target]).fetchone()[0]
    found = days_stamped_since(con, suite.table, scope, since) if since else None
    return None if found is None else (found[0], f"the rows of the {len(found[1])} days rebuilt since it last passed")


@dg.multi_asset_check(specs=SPECS, name="gx_suites", can_subset=True)
def gx_suites(context: dg.AssetCheckExecutionContext, ledger: LedgerResource,
              refresh_lock: RefreshLockResource) -> Iterator[dg.AssetCheckResult]:
    """Validate every selected suite; record each outcome in audit.check_results."""
    selected = context.selected_asset_check_keys
    run_id = context.op_execution_context.run_id
    outcomes = []
    # A run of a subset of the assets: the raw suites that passed in the publication in place look at
    # this run's files only (module doc).
    passed_before = passed_checks(ledger.serving_path) if context.run.asset_selection else set()
    con = capped(duckdb.connect(str(ledger.db_path), read_only=True))
    try:
        files = loaded_files(con, run_id) if passed_before else []
        scopes = day_scopes() if passed_before and run_engine(context.run.run_config) == "duckdb" else {}
        for suite in SUITES:
            if dg.AssetCheckKey(dg.AssetKey(list(suite.key)), suite.check_name) not in selected:
                continue
            scope = files if suite.schema == "raw" and (suite.check_name, suite.target) in passed_before else None
            try:
                passed, failures, meta = run_suite(con, suite, scope, rebuilt_rows(con, suite, scopes, passed_before))
                status = check_status(suite.severity, passed)
            except Exception as exc:  # noqa: BLE001 - a missing table or unreadable column fails the check, not the run
                passed, failures, meta = False, [f"could not validate {suite.target}: {exc}"], {}
                status = check_status(suite.severity, False, ran=False)
            outcomes.append((suite, passed, status, failures, meta))
    finally:
        con.close()
    writer = ledger.connect()
    try:
        writer.execute("begin transaction")  # one commit for every suite's outcome
        recorded: list[CheckOutcome] = []
        for suite, _, status, failures, meta in outcomes:
            detail = "; ".join(failures) or "all expectations met"
            if meta.get("scope"):
                detail += (f" (validated {meta['scope']}: {meta.get('rows', 0):,} rows; the other rows passed "
                           "when they were loaded or built)")
            elif meta.get("sampled", "").startswith("using sample"):
                detail += f" (validated {meta['sampled']})"
            elif meta.get("rows") == 0:
                detail += " (no rows: the row rules had nothing to check)"
            # Each unmet expectation is one "failing row" of the suite: the page lists them one by one.
            recorded.append(CheckOutcome(suite.check_name, suite.target, suite.severity, status, detail, failures))
        record_checks(writer, run_id, recorded)
        writer.execute("commit")
    finally:
        writer.close()
    for suite, passed, _, failures, meta in outcomes:
        yield _result(suite, passed, failures, meta)


defs = dg.Definitions(asset_checks=[gx_suites])
