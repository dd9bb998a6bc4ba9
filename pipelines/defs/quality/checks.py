"""great-expectations suites as Dagster asset checks, one check per suite in warehouse/expectations/.

Raw suites attach to `raw/<family>`, mart suites to `marts/<table>`. A blocking suite's check is
`blocking=True` with ERROR severity: when it fails, nothing downstream of its asset runs in that
refresh, `serving/publication` included. The others are WARN: the publication goes ahead and the
failure is listed on the dashboard's data-quality page. Every outcome is stored in
audit.check_results, which the publication copies.

All suites run in one op (a multi-asset check): one great-expectations context and one database
connection instead of one step per suite, which is most of their cost on small tables.
"""

from collections.abc import Iterator

import dagster as dg
import duckdb

from pipelines.resources import LedgerResource, RefreshLockResource
from warehouse.audit import check_status, record_check
from warehouse.expectations import SUITES, Suite, run_suite

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
            "missing_columns": meta.get("missing_columns") or "none",
            "seconds": float(meta.get("seconds", 0.0)),
            "failures": "\n".join(failures) or "none",
        },
    )


@dg.multi_asset_check(specs=SPECS, name="gx_suites", can_subset=True)
def gx_suites(context: dg.AssetCheckExecutionContext, ledger: LedgerResource,
              refresh_lock: RefreshLockResource) -> Iterator[dg.AssetCheckResult]:
    """Validate every selected suite; record each outcome in audit.check_results."""
    selected = context.selected_asset_check_keys
    outcomes = []
    con = duckdb.connect(str(ledger.db_path), read_only=True)
    try:
        for suite in SUITES:
            if dg.AssetCheckKey(dg.AssetKey(list(suite.key)), suite.check_name) not in selected:
                continue
            try:
                passed, failures, meta = run_suite(con, suite)
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
        for suite, _, status, failures, meta in outcomes:
            detail = "; ".join(failures) or "all expectations met"
            if meta.get("sampled", "").startswith("using sample"):
                detail += f" (validated {meta['sampled']})"
            elif meta.get("rows") == 0:
                detail += " (no rows: the row rules had nothing to check)"
            # Each unmet expectation is one "failing row" of the suite: the page lists them one by one.
            record_check(writer, context.op_execution_context.run_id, suite.check_name, suite.target,
                         suite.severity, status, detail, failures)
        writer.execute("commit")
    finally:
        writer.close()
    for suite, passed, _, failures, meta in outcomes:
        yield _result(suite, passed, failures, meta)


defs = dg.Definitions(asset_checks=[gx_suites])
