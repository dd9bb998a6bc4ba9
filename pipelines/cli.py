"""`gpu-ledger`: the command line. `run` materializes the same Dagster definitions in process."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import typer

from pipelines.cli_summary import checks_line, print_money_story, print_summary, wide_console
from warehouse import serving, serving_screens
from warehouse.home import HOME_ENV, REPO_ROOT, Home, HomeError, resolve_home, resolve_inputs
from warehouse.status import read_status

app = typer.Typer(help="GPU Ledger: what each GPU workload costs per accepted output.", no_args_is_help=True)
console = wide_console()


def _home(home: Path | None, create: bool = False) -> Home:
    """The home for a command; a path that cannot hold a warehouse ends the command with its reason."""
    paths = Home(resolve_home(home))
    try:
        return paths.ensure() if create else paths.check()
    except HomeError as exc:
        console.print(f"[red]{exc}[/red]", soft_wrap=True)
        raise typer.Exit(2) from exc


def _usage_error(message: str, code: int = 2) -> None:
    """One clear line and a non-zero exit for a wrong argument (no traceback)."""
    console.print(f"[red]{message}[/red]", soft_wrap=True)
    raise typer.Exit(code)


def _is_month(text: str) -> bool:
    try:
        datetime.strptime(text, "%Y-%m")
    except ValueError:
        return False
    return len(text) == 7


def _require_published(paths: Home) -> None:
    if serving.publication(paths.serving_db) is None:
        _usage_error(f"nothing is published in {paths.root} yet: run `gpu-ledger run` first", code=1)


@contextlib.contextmanager
def sigterm_kept() -> Iterator[None]:
    """Give SIGTERM back its disposition after a Dagster execution. Dagster maps SIGTERM to whatever
    SIGINT does when an execution ends; in a process started in the background without job control
    (cron, `nohup cmd &` in a script, some CI runners) SIGINT is ignored, so every later SIGTERM was
    ignored too: the process and every process it started afterwards (they inherit an ignored
    signal) could no longer be stopped by `kill`, `timeout` or a service manager."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    before = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def execute_refresh(
    home: Path, inputs: Path, *, full_refresh: bool = False,
    backfill_from: str | None = None, backfill_to: str | None = None, engine: str = "duckdb",
    spark_master: str | None = None, progress: bool = False, docs: bool = True, lock_wait: float = 0.0,
) -> tuple[bool, str, str]:
    """Run the nightly job once in process; returns (success, run_id, failure reason).

    dbt's incremental models rebuild the days new files touched; `backfill_from`/`backfill_to`
    (YYYY-MM-DD, inclusive) add a window of days, `full_refresh` rebuilds them from all raw rows.
    `engine` runs the dbt transforms on DuckDB (default) or Spark (pipelines/engines.py); `spark_master`
    is the Spark cluster's URL (`spark://host:port`; default: a Spark session inside the dbt process).
    `progress` prints one line per stage on stderr (pipelines/progress.py). `docs=False` skips the
    dbt docs site (a separate dbt process, ~4 s of CPU), for callers that only need the warehouse.
    One refresh of a home at a time: another one running makes this wait up to `lock_wait` seconds,
    then raise `RefreshBusy` (warehouse/refresh_lock.py) before anything of the home is touched.
    When the inputs and code are those the last published build started from (pipelines/refresh_state.py),
    nothing is rebuilt or published: the result is (True, that build's run id, "") and last_refresh.json
    says "no new data since run ..."; `full_refresh` or a backfill window always builds.
    """
    from warehouse.refresh_lock import refresh_lock

    paths = Home(home).ensure()
    with refresh_lock(paths.root, wait_s=lock_wait):
        return _refresh_locked(paths, inputs, full_refresh=full_refresh, backfill_from=backfill_from,
                               backfill_to=backfill_to, engine=engine, spark_master=spark_master,
                               progress=progress, docs=docs)


def _refresh_locked(paths: Home, inputs: Path, **options: Any) -> tuple[bool, str, str]:
    from pipelines.dbt_warm import warm_dbt
    from pipelines.outcome import early_outcome
    from pipelines.refresh_state import plan_refresh

    # Before Dagster and dbt are imported: a night without new data ends here, in about a second.
    forced = bool(options["full_refresh"] or options["backfill_from"] or options["backfill_to"])
    since = time.monotonic()  # the profile's total runs from here (pipelines/profile.py)
    plan = plan_refresh(paths.root, inputs, options["engine"], forced=forced)
    if (ended := early_outcome(paths.root, plan)) is not None:  # no new data, or a landing folder not writable
        return ended
    # dbt's process start (imports, schemas) runs from now on the other core, beside what precedes the build.
    with warm_dbt(paths.root, paths.dbt_target, paths.logs / "dbt-warm.log"):
        return _build(paths, inputs, plan, since=since, **options)


def _build(paths: Home, inputs: Path, plan: Any, *, since: float, full_refresh: bool, backfill_from: str | None,
           backfill_to: str | None, engine: str, spark_master: str | None, progress: bool,
           docs: bool) -> tuple[bool, str, str]:
    """The nightly job on what `plan` found changed (pipelines/refresh_state.py), in this process;
    `since`: when the plan began (time.monotonic), where the profile's total starts."""
    from pipelines.dbt_project import parse_manifest
    from pipelines.outcome import new_run_log
    from pipelines.refresh_state import affected_assets, state_record

    parse_manifest()  # re-parses only when the dbt project changed since the last parse

    from pipelines.definitions import defs
    from pipelines.defs.transform.assets import ledger_dbt_assets
    from pipelines.outcome import record_result, record_start
    from pipelines.profile import run_profile

    job = defs.resolve_job_def("nightly")
    # New inputs of some families: only what they affect runs (None: every asset).
    selection = None if plan.families is None else affected_assets(defs, plan.families, plan.tables)
    log_path = new_run_log(paths)
    record_start(paths.root, log_path)  # a refresh killed from here on is reported as interrupted
    loggers: dict = {"console": {"config": {"log_level": os.environ.get("GPU_LEDGER_LOG_LEVEL", "CRITICAL")}}}
    if progress:
        loggers["progress"] = {"config": {"dbt_models": len(ledger_dbt_assets.keys)}}
    # dagster-dbt echoes every dbt event to stdout; the console shows the summary, the log keeps it all.
    # A persistent instance per home: `dagster dev` (DAGSTER_HOME=HOME/dagster, `make dev`) shows every
    # run, asset materialization and check result the CLI records.
    from pipelines.dagster_storage import home_instance

    # Dagster's SQLite event log, engines kept open (a third of a refresh), paths relative to HOME/dagster.
    with open(log_path, "w") as log, contextlib.redirect_stdout(log), sigterm_kept(), \
            home_instance(paths.dagster) as instance:
        result = job.execute_in_process(
            instance=instance, raise_on_error=False, asset_selection=selection,
            run_config={
                "loggers": loggers,
                # The home and inputs reach every asset as resource config, not through the environment.
                "resources": {"ledger": {"config": {"home": str(paths.root), "inputs": str(inputs)}},
                              "refresh_lock": {"config": {"held_by_caller": True}}},  # taken above
                "ops": {"ledger_dbt_assets": {"config": {
                    "full_refresh": full_refresh, "backfill_from": backfill_from, "backfill_to": backfill_to,
                    "engine": engine, "spark_master": spark_master}},
                    "serving__dbt_docs": {"config": {"generate": docs}}},
            },
        )
        profile = run_profile(instance, result.run_id, time.monotonic() - since, plan.seconds)
    ok, reason = record_result(paths.root, result, profile, built_from=state_record(plan.state))
    return ok, result.run_id, reason


@app.command()
def run(
    inputs: Path | None = typer.Option(None, help="inputs folder (billing/, usage/, ...); default: bundled samples"),
    home: Path | None = typer.Option(None, help="warehouse home; default GPU_LEDGER_HOME or ./warehouse/home"),
    from_day: datetime | None = typer.Option(  # noqa: B008
        None, "--from", formats=["%Y-%m-%d"], help="backfill: also re-process UTC days from this one (YYYY-MM-DD)"),
    to_day: datetime | None = typer.Option(  # noqa: B008
        None, "--to", formats=["%Y-%m-%d"], help="backfill: ... through this one (default: --from)"),
    full_refresh: bool = typer.Option(False, "--full-refresh", "--full",
                                      help="rebuild everything from all raw rows, also with no new data"),
    engine: str = typer.Option("duckdb", help="where dbt transforms run: duckdb (embedded) or spark (docs/spark.md)"),
    spark_master: str | None = typer.Option(None, help="with --engine spark: the cluster, spark://HOST:PORT"),
    profile: bool = typer.Option(False, "--profile", help="print seconds per stage (also kept in last_refresh.json)"),
    docs: bool = typer.Option(True, "--docs/--no-docs", help="regenerate HOME/dbt-docs when stale (~4 s); --no-docs leaves it"),
    wait: float = typer.Option(0.0, "--wait", help="seconds to wait for another refresh of this home to finish (exit 3 after)"),
) -> None:
    """One refresh: land -> raw -> dbt build -> checks -> publish. Exit 0 only if published.

    Only new files are loaded; the big dbt facts rebuild only the UTC days those files touch. With no
    new or changed input (and no code change) since the last build, it ends in seconds and publishes
    nothing ("no new data since run ..."). --from/--to adds days to rebuild; --full-refresh rebuilds every day.
    """
    home_dir = _home(home, create=True).root
    inputs_dir = resolve_inputs(inputs)
    if not inputs_dir.is_dir():
        console.print(f"[red]inputs folder not found: {inputs_dir}[/red]")
        raise typer.Exit(2)
    backfill_from = (from_day or to_day).date().isoformat() if (from_day or to_day) else None
    backfill_to = (to_day or from_day).date().isoformat() if (from_day or to_day) else None
    if backfill_from and backfill_to and backfill_to < backfill_from:
        console.print(f"[red]--to {backfill_to} is before --from {backfill_from}[/red]")
        raise typer.Exit(2)
    from pipelines.engines import engine_problem

    if problem := engine_problem(engine, spark_master):
        _usage_error(problem)
    # Printed first and flushed, so a piped run says what it is doing from its first second.
    console.print(f"refreshing {home_dir} from {inputs_dir} (log: {Home(home_dir).run_log})", soft_wrap=True)
    from warehouse.refresh_lock import RefreshBusy

    try:
        ok, run_id, reason = execute_refresh(home_dir, inputs_dir, full_refresh=full_refresh, backfill_from=backfill_from,
                                             backfill_to=backfill_to, engine=engine, spark_master=spark_master,
                                             progress=True, docs=docs, lock_wait=wait)
    except RefreshBusy as exc:  # the running refresh owns the home: nothing was touched, nothing to summarise
        console.print(f"[red]{exc}[/red]", soft_wrap=True)
        raise typer.Exit(3) from exc
    last = read_status(home_dir) or {}
    if ok and last.get("no_new_data"):  # nothing was rebuilt: the publication in place is the last build's
        console.print(last["message"], soft_wrap=True)
    if not ok:
        console.print(f"[red]refresh failed, publication withheld:[/red] {reason}")
        if Home(home_dir).serving_db.exists():
            console.print("the previous publication stays in place")
    try:
        print_summary(home_dir, run_id)
    except duckdb.Error as exc:
        console.print(f"[red]no summary available: {exc}[/red]")
    if profile:
        from pipelines.profile import format_profile

        console.print(format_profile((read_status(home_dir) or {}).get("profile") or {}), highlight=False)
    raise typer.Exit(0 if ok else 1)


@app.command()
def dashboard(
    home: Path | None = typer.Option(None, help="warehouse home holding serving.duckdb"),
    port: int = typer.Option(8501, help="port on 127.0.0.1"),
) -> None:
    """Start the Streamlit dashboard on 127.0.0.1 (reads serving.duckdb read-only)."""
    paths = _home(home)
    console.print(f"dashboard: http://127.0.0.1:{port}  (data: {paths.serving_db})")
    app_path = REPO_ROOT / "dashboards" / "app.py"
    cmd = [sys.executable, "-m", "streamlit", "run", str(app_path), "--server.address", "127.0.0.1",
           "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    # This process becomes Streamlit (exec), so stopping the command stops the server with it; the
    # home reaches it through the new process's own environment (this one's is never written).
    sys.stdout.flush()
    os.execve(sys.executable, cmd, {**os.environ, HOME_ENV: str(paths.root)})


@app.command()
def report(
    team: str | None = typer.Option(None, help="only this team (default: every team)"),
    month: str | None = typer.Option(None, help="YYYY-MM (default: every month published)"),
    home: Path | None = typer.Option(None, help="warehouse home holding serving.duckdb"),
) -> None:
    """Write per-team chargeback/showback reports (HTML + CSV) from the published copy."""
    from reporting.team_reports import write_team_reports

    paths = _home(home)
    if month is not None and not _is_month(month):
        _usage_error(f"--month {month}: expected a month as YYYY-MM, e.g. 2025-04")
    _require_published(paths)
    if team is not None:
        known = sorted({*serving.distinct(paths.serving_db, "fct_chargeback_monthly", "team_id"),
                        *serving.distinct(paths.serving_db, "fct_showback_monthly", "team_id")})
        if team not in known:
            _usage_error(f"--team {team}: no such team in the publication; teams: {', '.join(known)}", code=1)
    if month is not None:
        keys = serving.report_keys(paths.serving_db, team=team)
        months = sorted({f"{m:%Y-%m}" for m in keys["period"]})
        if month not in months:
            who = f"team {team}" if team else "any team"
            _usage_error(f"--month {month}: {who} has no cost in that month, so no report was written; months "
                         f"published: {', '.join(months) or 'none'}", code=1)
    written = write_team_reports(paths.serving_db, paths.reports, team=team, month=month)
    for path in written:
        console.print(str(path))
    console.print(f"{len(written)} files written")


@app.command()
def decide(
    workload: str | None = typer.Option(None, help="workload id from the registry"),
    every: bool = typer.Option(False, "--all", help="one record per registry workload plus an index"),
    home: Path | None = typer.Option(None, help="warehouse home holding serving.duckdb"),
) -> None:
    """Write a dated one-page decision record (plus appendix and JSON) for a workload's GPU / API route."""
    from pipelines.cli_decide import run_decide

    paths = _home(home)
    _require_published(paths)
    run_decide(console, paths, workload, every)


@app.command()
def status(home: Path | None = typer.Option(None, help="warehouse home")) -> None:
    """The last refresh, the publication it left in place, and the age of that publication."""
    from pipelines.cli_alerts import print_open_alerts
    from pipelines.outcome import attempt_state
    paths = _home(home)
    last = read_status(paths.root)
    if last is None:
        console.print("no refresh has run in this home yet")
        raise typer.Exit(1)
    # The attempt (what ran last, even if killed) and the last finished refresh are told apart.
    attempt, state = last.get("attempt") or {}, attempt_state(last)
    if state == "interrupted":
        console.print(f"last attempt: [red]INTERRUPTED[/red]: started {attempt.get('started_at')} (pid "
                      f"{attempt.get('pid')}), never finished; its log: {paths.root / attempt['log'] if attempt.get('log') else None}")
    elif state == "running":
        console.print(f"refresh running since {attempt.get('started_at')} (pid {attempt.get('pid')}); "
                      f"log: {paths.root / attempt['log'] if attempt.get('log') else None}")
    if "ok" not in last:
        console.print("no refresh has finished in this home yet")
    else:
        colour = "green" if last["ok"] else "red"
        run = f" (run {last['run_id']})" if last.get("run_id") and not last.get("no_new_data") else ""
        console.print(f"last finished refresh: [{colour}]{'ok' if last['ok'] else 'FAILED'}[/{colour}] "
                      f"at {last['finished_at']}{run}: {last['message']}")
    pub = serving.publication(paths.serving_db)
    if pub is None:
        console.print("no publication yet")
        raise typer.Exit(1)
    failed = serving.query(paths.serving_db, "select check_name, status, detail from check_results "
                                             "where status <> 'pass' order by status, check_name")
    age = datetime.now(UTC).replace(tzinfo=None) - pub["published_at"]
    through = serving_screens.charges_through(paths.serving_db)
    console.print(f"charges through {through or 'unknown'} (the last day a bill or API invoice covers)")
    console.print(f"publication: run {pub['run_id']} at {pub['published_at']:%Y-%m-%d %H:%M} UTC "
                  f"({age.total_seconds() / 3600:.1f} h old)")
    console.print(checks_line({"run": pub["checks_run"], "pass": pub["checks_passed"], "warn": pub.get("checks_warned", 0),
                               "fail": pub.get("checks_failed", 0), "error": 0}))
    for name, check_status, detail in failed.itertuples(index=False):
        console.print(f"  [yellow]{check_status}[/yellow] {detail} ({name})")
    print_money_story(paths.serving_db)
    print_open_alerts(console, paths.root)


@app.command()
def rejects(
    home: Path | None = typer.Option(None, help="warehouse home"),
    source: str | None = typer.Option(None, help="only this source family"),
) -> None:
    """List quarantined rows and files (from the working database)."""
    from pipelines.cli_alerts import print_rejects
    from sources.catalog import FAMILIES

    if source is not None and source not in FAMILIES:
        _usage_error(f"--source {source}: expected one of {', '.join(FAMILIES)}")
    paths = _home(home)
    if not paths.ledger_db.exists():
        _usage_error(f"no working database in {paths.root}: run `gpu-ledger run` first", code=1)
    print_rejects(console, paths.ledger_db, source)


@app.command()
def prepare(
    if_stale: bool = typer.Option(False, "--if-stale", help="parse only when the dbt project changed since the last parse"),
) -> None:
    """Parse the dbt project (the manifest Dagster builds its assets from); run after editing dbt/."""
    from pipelines.dbt_parse import parse_manifest

    console.print(f"dbt manifest: {parse_manifest(force=not if_stale)}")


export_app = typer.Typer(help="Export the published ledger for other tools.", no_args_is_help=True)
app.add_typer(export_app, name="export")


@export_app.command("focus")
def export_focus_command(
    out: Path = typer.Option(..., help="folder to write focus_<YYYY-MM>.<format> files into"),
    home: Path | None = typer.Option(None, help="warehouse home holding serving.duckdb"),
    format: str = typer.Option("parquet", "--format", help="parquet (default) or csv"),
    month: str | None = typer.Option(None, help="only this billing period, YYYY-MM (default: every month)"),
) -> None:
    """Write the published ledger as FOCUS 1.3 (split allocation rows included), one file per billing period."""
    from warehouse.export import FORMATS, export_focus

    paths = _home(home)
    if format not in FORMATS:
        _usage_error(f"--format {format}: expected one of {', '.join(FORMATS)}")
    if month is not None and not _is_month(month):
        _usage_error(f"--month {month}: expected a month as YYYY-MM, e.g. 2025-04")
    _require_published(paths)
    try:
        written = export_focus(paths.serving_db, out, fmt=format, month=month)
    except serving.NotPublished as exc:
        _usage_error(str(exc), code=1)
    if not written:
        periods = sorted(f"{m:%Y-%m}" for m in serving.distinct(paths.serving_db, "ledger_focus", "BillingPeriodStart"))
        _usage_error(f"--month {month}: no ledger line in that billing period, so nothing was exported; periods "
                     f"published: {', '.join(periods) or 'none'}" if month else
                     "the published ledger has no line to export", code=1)
    console.print("\n".join([*map(str, written), f"{len(written)} files written"]))


if __name__ == "__main__":
    app()
