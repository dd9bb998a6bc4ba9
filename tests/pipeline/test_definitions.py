"""The Dagster definitions load, hold the whole pipeline, and validate with Dagster's own CLI."""

import subprocess
from pathlib import Path

import dagster as dg

from pipelines.definitions import defs

REPO = Path(__file__).resolve().parents[2]


def test_nightly_job_covers_every_layer() -> None:
    job = defs.resolve_job_def("nightly")
    keys = {k.to_user_string() for k in job.asset_layer.executable_asset_keys}
    for expected in ("landing/inputs", "raw/billing", "raw/registry", "marts/ledger_focus",
                     "marts/fct_chargeback_monthly", "serving/publication"):
        assert expected in keys, f"{expected} missing from the nightly job"


def test_nightly_schedule_runs_at_two_utc() -> None:
    schedule = defs.resolve_schedule_def("nightly_refresh")
    assert schedule.cron_schedule == "0 2 * * *"
    assert schedule.execution_timezone == "UTC"


def test_gx_checks_have_their_suites_severity() -> None:
    from warehouse.expectations import SUITES

    graph = defs.resolve_asset_graph()
    checks = {k.name: graph.get_check_spec(k) for k in graph.asset_check_keys if k.name.startswith("gx_")}
    assert set(checks) == {s.check_name for s in SUITES}, "great-expectations checks missing"
    for suite in SUITES:
        assert checks[suite.check_name].blocking == suite.blocking, suite.check_name
    assert checks["gx_ledger_focus"].blocking and checks["gx_fct_chargeback_monthly"].blocking


def test_publication_depends_on_every_mart() -> None:
    graph = defs.resolve_asset_graph()
    publication = dg.AssetKey(["serving", "publication"])
    parents = graph.get(publication).parent_keys
    assert dg.AssetKey(["marts", "fct_chargeback_monthly"]) in parents
    assert dg.AssetKey(["marts", "ledger_focus"]) in parents


def test_dagster_cli_validates_definitions(definitions_probe: subprocess.CompletedProcess) -> None:
    """`dagster definitions validate -m pipelines.definitions`, in the probe's fresh interpreter (tests/conftest.py)."""
    assert definitions_probe.returncode == 0, definitions_probe.stdout + definitions_probe.stderr
    assert "dagster definitions validate exit 0" in definitions_probe.stdout, definitions_probe.stdout


def test_sensors_are_defined() -> None:
    drop = defs.resolve_sensor_def("drop_folder_sensor")
    assert drop.job_name == "nightly" and drop.minimum_interval_seconds == 60
    failure = defs.resolve_sensor_def("notify_run_failure")
    assert failure.default_status == dg.DefaultSensorStatus.RUNNING


def test_fetch_assets_feed_raw_loads_and_docs_follow_publication() -> None:
    graph = defs.resolve_asset_graph()
    keys = {k.to_user_string() for k in defs.resolve_job_def("nightly").asset_layer.executable_asset_keys}
    assert {"fetch/prices", "fetch/api_spend", "serving/dbt_docs"} <= keys
    assert dg.AssetKey(["fetch", "prices"]) in graph.get(dg.AssetKey(["raw", "prices"])).parent_keys
    assert dg.AssetKey(["fetch", "api_spend"]) in graph.get(dg.AssetKey(["raw", "api_spend"])).parent_keys
    assert graph.get(dg.AssetKey(["serving", "dbt_docs"])).parent_keys == {dg.AssetKey(["serving", "publication"])}
