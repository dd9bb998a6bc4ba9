"""great-expectations suites as Dagster asset checks on the published marts (blocking ones stop publish)."""


import dagster as dg
import duckdb

from pipelines.audit import record_check
from pipelines.gx_suites import SUITES, Suite, validate
from pipelines.settings import LedgerResource


def _gx_check(suite: Suite) -> dg.AssetChecksDefinition:
    @dg.asset_check(
        asset=dg.AssetKey(["marts", suite.table]),
        name=f"gx_{suite.table}",
        blocking=suite.blocking,
        description=f"great-expectations suite on marts.{suite.table} ({len(suite.expectations)} expectations)",
    )
    def _check(context: dg.AssetCheckExecutionContext, ledger: LedgerResource) -> dg.AssetCheckResult:
        con = duckdb.connect(str(ledger.db_path), read_only=True)
        try:
            df = con.execute(f'select * from marts."{suite.table}"').df()
        finally:
            con.close()
        passed, failures = validate(suite, df)
        writer = ledger.connect()
        try:
            record_check(writer, context.op_execution_context.run_id, f"gx_{suite.table}", suite.table,
                         "error" if suite.blocking else "warn", passed, "; ".join(failures) or "all expectations met")
        finally:
            writer.close()
        return dg.AssetCheckResult(
            passed=passed,
            severity=dg.AssetCheckSeverity.ERROR if suite.blocking else dg.AssetCheckSeverity.WARN,
            metadata={"rows": len(df), "failures": "\n".join(failures) or "none"},
        )

    return _check


defs = dg.Definitions(asset_checks=[_gx_check(s) for s in SUITES])
