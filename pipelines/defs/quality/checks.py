"""great-expectations suites as Dagster asset checks, one per suite in pipelines/gx_suites.py.

Raw suites attach to `raw/<family>`, mart suites to `marts/<table>`. A blocking suite's check is
`blocking=True` with ERROR severity: when it fails, nothing downstream of its asset runs in that
refresh, `serving/publication` included. The others are WARN: the publication goes ahead and the
failure is listed on the dashboard's data-quality page. Every outcome is stored in
audit.check_results, which the publication copies.
"""


import dagster as dg
import duckdb

from pipelines.audit import record_check
from pipelines.gx_suites import SUITES, Suite, run_suite
from pipelines.settings import LedgerResource


def _gx_check(suite: Suite) -> dg.AssetChecksDefinition:
    @dg.asset_check(
        asset=dg.AssetKey(list(suite.key)),
        name=suite.check_name,
        blocking=suite.blocking,
        description=(f"great-expectations suite on {suite.target} ({len(suite.expectations)} expectations, "
                     f"{'blocking' if suite.blocking else 'warning'})"),
    )
    def _check(context: dg.AssetCheckExecutionContext, ledger: LedgerResource) -> dg.AssetCheckResult:
        con = duckdb.connect(str(ledger.db_path), read_only=True)
        try:
            passed, failures, meta = run_suite(con, suite)
        except Exception as exc:  # noqa: BLE001 - a missing table or unreadable column fails the check, not the run
            passed, failures, meta = False, [f"could not validate {suite.target}: {exc}"], {}
        finally:
            con.close()
        detail = "; ".join(failures) or "all expectations met"
        if meta.get("sampled", "").startswith("using sample"):
            detail += f" (validated {meta['sampled']})"
        writer = ledger.connect()
        try:
            record_check(writer, context.op_execution_context.run_id, suite.check_name, suite.target,
                         suite.severity, passed, detail)
        finally:
            writer.close()
        return dg.AssetCheckResult(
            passed=passed,
            severity=dg.AssetCheckSeverity.ERROR if suite.blocking else dg.AssetCheckSeverity.WARN,
            metadata={
                "table": suite.target,
                "expectations": len(suite.expectations),
                "rows": meta.get("rows", 0),
                "rows_validated": meta.get("rows_validated", 0),
                "sampled": meta.get("sampled", "n/a"),
                "missing_columns": meta.get("missing_columns") or "none",
                "seconds": float(meta.get("seconds", 0.0)),
                "failures": "\n".join(failures) or "none",
            },
        )

    return _check


GX_CHECKS = [_gx_check(s) for s in SUITES]

defs = dg.Definitions(asset_checks=GX_CHECKS)
