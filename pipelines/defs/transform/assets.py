"""The dbt project as Dagster assets (dagster-dbt): every model an asset, every dbt test a check.

The big facts (int_gpu_telemetry_hourly, int_api_requests_daily) are dbt incremental models by UTC day:
each `dbt build` rebuilds only the days touched by files loaded since their last build. A backfill
window and a full rebuild are run config of this asset (`gpu-ledger run --from/--to`, `--full-refresh`).
No Dagster DailyPartitionsDefinition: the whole refresh is one in-process job against one DuckDB file
(a single writer), so per-day partition runs could not run in parallel anyway, and which days to
rebuild follows from the data (late and restated files), not from the calendar of the run.
"""


import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

import dagster as dg
from dagster_dbt import DagsterDbtTranslator, DagsterDbtTranslatorSettings, DbtCliResource, dbt_assets

from pipelines.check_titles import check_title
from pipelines.dbt_entry import RUN_RESULTS_ONLY
from pipelines.dbt_project import ledger_dbt, load_manifest, require_manifest
from pipelines.engines import ENGINES, prepare_engine, publish_engine_marts
from pipelines.profile import DBT_NODE_SECONDS, dbt_node_seconds
from pipelines.resources import LedgerResource, RefreshLockResource
from warehouse.audit import CheckOutcome, prune_failing_rows, record_checks
from warehouse.expectations.runner import prewarm as prewarm_great_expectations


class LedgerTranslator(DagsterDbtTranslator):
    """Asset keys say layer and name (`marts/fct_chargeback_monthly`); groups are layers."""

    def get_asset_key(self, dbt_resource_props: Mapping[str, Any]) -> dg.AssetKey:
        if dbt_resource_props["resource_type"] == "source":
            return super().get_asset_key(dbt_resource_props)  # meta.dagster.asset_key -> raw/<family>
        return dg.AssetKey([dbt_resource_props["schema"], dbt_resource_props["name"]])

    def get_group_name(self, dbt_resource_props: Mapping[str, Any]) -> str | None:
        return dbt_resource_props.get("schema") or "dbt"


TRANSLATOR = LedgerTranslator(
    settings=DagsterDbtTranslatorSettings(enable_asset_checks=True, enable_duplicate_source_asset_keys=True)
)


# dbt result status -> check status (warehouse.audit.CHECK_STATUSES); `skipped` means an upstream failed.
DBT_STATUS = {"pass": "pass", "warn": "warn", "fail": "fail", "error": "error", "skipped": "error"}
# Every row a test returns is kept (its CSV on the Data quality page holds them all; the page shows a few).
FAILING_ROWS_KEPT = 100_000
# The rules a generic test compiled from yml (dbt/macros/test_column_constraints.sql), kept with its outcome.
RULES_DIGEST = re.compile(r"/\* check rules: ([0-9a-f]{32}) \*/")


# Where the rows each test returned wait (on the recording connection) for the outcomes' transaction.
STAGED_FAILURES = "dbt_failing_rows"


def _stage_failing_rows(con: Any, check: str, compiled_sql: str | None) -> None:
    """Copy the rows a test returned (up to FAILING_ROWS_KEPT) as JSON text into STAGED_FAILURES, so a
    warning names what it found. In DuckDB itself (`to_json` of each row): one warn test of a 365-day
    history returns 39,528 rows, which fetched, dumped to JSON and inserted one by one from Python took
    ~6 s, in SQL ~0.1 s. The rows are numbered in the order of their JSON text, and a test that finds more
    than the cap keeps the first by that order: the same rows get the same numbers run after run, whatever
    order the test's query returned them in. A test whose SQL DuckDB cannot run (another engine's, a dropped
    relation) keeps its count and no rows."""
    if not compiled_sql:
        return
    try:
        con.execute(f"insert into {STAGED_FAILURES} select ?, row_number() over (order by found), left(found, 2000) "
                    f"from (select cast(to_json(failing) as varchar) as found from ({compiled_sql}) as failing "
                    f"order by found limit {FAILING_ROWS_KEPT}) as kept", [check])
    except Exception:  # noqa: BLE001 - the SQL of another engine, or a dropped relation: the count stays
        pass


def _record_dbt_results(
    ledger: LedgerResource, run_id: str, results: dict[str, Any],
) -> tuple[dict[str, int], list[str]]:
    """Copy dbt test outcomes into audit.check_results (a `warn` stays a warning, never a pass), and the rows
    each warning or failure found into audit.check_failures. Returns the counts by status and the failed
    blocking checks as `name: title`, so the refresh's own error names them."""
    nodes = load_manifest().get("nodes", {})  # descriptions and meta of the tests
    con = ledger.connect()
    counts = dict.fromkeys(("pass", "warn", "fail", "error"), 0)
    outcomes: list[CheckOutcome] = []
    blocking: list[str] = []
    try:
        con.execute(f"create or replace temp table {STAGED_FAILURES} "
                    "(check_name varchar, row_number bigint, failing_row varchar)")
        for r in results.get("results", []):
            uid = r.get("unique_id", "")
            if not uid.startswith("test."):
                continue
            status = DBT_STATUS.get(r.get("status"), "error")
            # A dbt `warn` comes from a warn-severity test; every other test blocks the publication.
            severity = "warn" if status == "warn" else "error"
            if status in ("warn", "fail"):
                _stage_failing_rows(con, uid.split(".")[2], r.get("compiled_code"))
            title = check_title(nodes.get(uid, {"name": uid.split(".")[2]}), status, r.get("failures"),
                                str(r.get("message") or ""))
            digest = RULES_DIGEST.search(r.get("compiled_code") or "")
            outcomes.append(CheckOutcome(uid.split(".")[2], "dbt", severity, status, title,
                                         rules_digest=digest and digest.group(1)))
            counts[status] += 1
            if r.get("status") in ("fail", "error"):  # not "skipped": a test an upstream failure left unrun
                blocking.append(f"{uid.split('.')[2]}: {title}")
        # One transaction for the ~60-160 outcomes (the failing-row reads above stay outside it: a query
        # that errors would abort it).
        con.execute("begin transaction")
        record_checks(con, run_id, outcomes)
        con.execute("insert into audit.check_failures select ?, check_name, 'dbt', row_number, failing_row "
                    f"from {STAGED_FAILURES}", [run_id])
        prune_failing_rows(con)  # once a refresh: the failing rows of old runs (warehouse/audit.py)
        con.execute("commit")
    finally:
        con.close()
    return counts, blocking


def _node_errors(results: dict[str, Any]) -> list[str]:
    """`model <name>: <the last line of dbt's message>` for every model, seed or snapshot that errored."""
    out = []
    for r in results.get("results", []):
        uid = str(r.get("unique_id", ""))
        if r.get("status") == "error" and not uid.startswith(("test.", "unit_test.")):
            lines = str(r.get("message") or "").strip().splitlines()
            out.append(f"{uid.split('.')[0]} {uid.split('.')[-1]}: {lines[-1].strip() if lines else 'error'}")
    return out


class DbtBuildConfig(dg.Config):
    """Options of one `dbt build`; the defaults are the nightly incremental refresh."""

    full_refresh: bool = False  # rebuild incremental models from all raw rows (`dbt build --full-refresh`)
    backfill_from: str | None = None  # YYYY-MM-DD: also rebuild these UTC days (inclusive) ...
    backfill_to: str | None = None  # ... through this one
    engine: str = "duckdb"  # where the transforms run: duckdb (embedded) or spark (docs/spark.md)
    spark_master: str | None = None  # spark: the cluster (spark://host:port); None: a local session
    # dbt unit tests check SQL logic on literal rows, not the data: the test suite runs them once
    # (tests/dbt/test_dbt_unit_tests.py), not every nightly refresh (~30 % of the dbt build's node time).
    unit_tests: bool = False


def dbt_build_args(config: DbtBuildConfig, dbt_vars: Mapping[str, str] | None = None) -> list[str]:
    """The `dbt build` command line for the config; `dbt_vars` are the paths the profile reads."""
    if config.engine not in ENGINES:
        raise ValueError(f"unknown engine {config.engine!r}; expected one of {sorted(ENGINES)}")
    # No dbt.log file: at its default debug level dbt wrote ~10 MB per sample refresh and formatting
    # those lines was ~6 s of the build's CPU (py-spy). Every info event (each node's
    # status, timing and message) still reaches HOME/logs/run-*.log through dagster-dbt's stream,
    # and compiled SQL stays in HOME/dbt-target/compiled; `dbt build --debug` by hand for more.
    args = ["build", "--log-level-file", "none"]
    if config.engine != "duckdb":
        args += ["--target", config.engine]
    if not config.unit_tests or config.engine != "duckdb":
        # Unit tests run on DuckDB only (same SQL on Spark), and only when asked for.
        args += ["--exclude-resource-type", "unit_test"]
    if config.full_refresh:
        args.append("--full-refresh")
    backfill = {k: v for k, v in (("backfill_from", config.backfill_from), ("backfill_to", config.backfill_to)) if v}
    all_vars = {**(dbt_vars or {}), **backfill}
    if all_vars:
        args += ["--vars", json.dumps(all_vars, sort_keys=True)]
    return args


@dbt_assets(manifest=require_manifest(), project=ledger_dbt, dagster_dbt_translator=TRANSLATOR)
def ledger_dbt_assets(
    context: dg.AssetExecutionContext, dbt: DbtCliResource, ledger: LedgerResource, config: DbtBuildConfig,
    refresh_lock: RefreshLockResource,
) -> Iterator[Any]:
    """`dbt build` on the configured engine; a failing blocking test fails the step.

    On DuckDB dbt builds inside the ledger file. On another engine the raw layer is exported to the
    Parquet lake first, dbt builds there, and the marts it built are imported into the ledger, so
    every check and the publication downstream read them exactly as they read DuckDB's.
    """
    # The resource decides where the ledger lives; dbt's profile reads it as a var (never os.environ).
    dbt_vars = prepare_engine(config.engine, ledger.home_dir, ledger.db_path, config.spark_master)
    context.log.info(f"{config.engine}: dbt vars {dbt_vars}")
    prewarm_great_expectations()  # its import overlaps the build; the suites run right after it
    target = ledger.paths.dbt_target
    target.mkdir(parents=True, exist_ok=True)
    (target / "run_results.json").unlink(missing_ok=True)  # never read a previous run's results
    # `--in`: dbt runs inside the home, where the vars' relative ledger path points (pipelines/dbt_entry.py).
    # `--run-results-only`: no manifest.json written twice per build, only the run_results.json read below.
    args = ["--in", str(ledger.home_dir), RUN_RESULTS_ONLY, *dbt_build_args(config, dbt_vars)]
    invocation = dbt.cli(args, context=context, raise_on_error=False, target_path=target)
    try:
        yield from invocation.stream()
    finally:
        # If the step dies mid-stream, do not leave a dbt child holding the DuckDB write lock.
        if invocation.process.poll() is None:
            invocation.process.terminate()
            invocation.process.wait(timeout=30)
    run_results = invocation.get_artifact("run_results.json")
    DBT_NODE_SECONDS.clear()
    DBT_NODE_SECONDS.update(dbt_node_seconds(run_results))
    counts, blocking = _record_dbt_results(ledger, context.run.run_id, run_results)
    failed = counts["fail"] + counts["error"]
    context.log.info(f"dbt tests: {counts['pass']} passed, {counts['warn']} warnings, {failed} failed")
    if not invocation.is_successful():
        # Name what failed (the first five) in the error itself: a model that could not be built, with the first
        # line of dbt's message, and the checks that failed; the tests a failure left unable to run are counted.
        failed_names = _node_errors(run_results) + blocking
        named = "; ".join(failed_names[:5]) + ("; ..." if len(failed_names) > 5 else "")
        raise dg.Failure(
            description=f"dbt build failed ({failed} failing tests{': ' + named if named else ''}); "
                        "the publication is withheld",
            metadata={"failed_tests": failed},
        )
    imported = publish_engine_marts(config.engine, ledger.home_dir, ledger.db_path)
    if imported:
        context.log.info(f"{config.engine}: imported {len(imported)} marts, {sum(imported.values())} rows")


defs = dg.Definitions(assets=[ledger_dbt_assets])
