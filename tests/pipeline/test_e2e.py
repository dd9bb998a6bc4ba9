"""Full refreshes through `gpu-ledger run`'s code path on real sample files."""

import csv
import io
import json
import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from pipelines.cli import execute_refresh
from tests import prefetch
from tests.conftest import FOCUS, SAMPLES, copy_home, focus_inputs

pytestmark = pytest.mark.e2e


def _inputs(tmp: Path, billing_files: dict[str, bytes | Path]) -> Path:
    """An inputs folder with the sample registry and the given billing files."""
    return focus_inputs(tmp, billing_files)


def test_sample_run_publishes_every_foundation_table(sample_run: dict) -> None:
    assert sample_run["ok"], sample_run["reason"]
    con = duckdb.connect(str(sample_run["home"] / "serving.duckdb"), read_only=True)
    try:
        tables = {r[0] for r in con.execute("select table_name from information_schema.tables").fetchall()}
        for t in ("ledger_focus", "fct_chargeback_monthly", "fct_workload_unit_cost", "publication", "dq_rejects"):
            assert t in tables, f"{t} not published"
        run_id, checks_run, checks_passed, checks_warned, checks_failed = con.execute(
            "select run_id, checks_run, checks_passed, checks_warned, checks_failed from publication").fetchone()
        assert run_id == sample_run["run_id"]
        # A warning is counted as a warning, never as a pass: the samples carry known warnings
        # (GCP prices observed years before the run, FOCUS rows without ListCost, ...).
        assert checks_failed == 0 and checks_warned >= 1 and checks_run > 20
        assert checks_run == checks_passed + checks_warned
        statuses = dict(con.execute("select status, count(*) from check_results group by 1").fetchall())
        assert statuses == {"pass": checks_passed, "warn": checks_warned}
        # Every warning is a warn-severity check, and each dbt warning publishes the rows it found.
        assert con.execute("select count(*) from check_results where status = 'warn' and severity <> 'warn'"
                           ).fetchone()[0] == 0
        unexplained = con.execute(
            "select list(check_name) from check_results c where status = 'warn' and target = 'dbt' and not exists "
            "(select 1 from check_failures f where f.check_name = c.check_name)").fetchone()[0]
        assert not unexplained, unexplained
    finally:
        con.close()


def test_chargeback_equals_the_raw_export_total(sample_run: dict) -> None:
    """Chargeback for the FOCUS sample's accounts equals a plain read of the file, to the cent."""
    raw = duckdb.connect().execute(
        "select BillingPeriodStart::date, sum(BilledCost::decimal(38,12)) from read_csv(?, all_varchar=true, "
        "nullstr=['NULL','']) group by all order by 1", [str(FOCUS)]).fetchall()
    con = duckdb.connect(str(sample_run["home"] / "serving.duckdb"), read_only=True)
    try:
        published = con.execute(
            "select BillingPeriodStart::date, sum(BilledCost) from ledger_focus where x_source_file = ? "
            "group by all order by 1", [FOCUS.name]).fetchall()
        # The invoice reconciles on the billed basis: Σ billed_cost + API spend (total_cost is amortised).
        chargeback = dict(con.execute(
            "select billing_period_start, sum(billed_cost + api_cost) from fct_chargeback_monthly where currency = 'USD' "
            "group by all").fetchall())
        invoices = dict(con.execute(
            "select period, sum(amount) from ("
            " select BillingPeriodStart::date as period, BilledCost as amount from ledger_focus"
            " where BillingCurrency = 'USD'"
            " union all select date_trunc('month', day)::date, cost from fct_api_spend_daily where currency = 'USD'"
            ") group by all").fetchall())
    finally:
        con.close()
    assert published == raw
    assert raw[0][1] == Decimal("20.280226728990")
    # Chargeback = cloud bill + API spend (its own invoice), per period, to the cent.
    assert chargeback == invoices


def test_unallocated_cost_is_kept_not_dropped(sample_run: dict) -> None:
    con = duckdb.connect(str(sample_run["home"] / "serving.duckdb"), read_only=True)
    try:
        teams = {r[0] for r in con.execute("select distinct team_id from fct_chargeback_monthly").fetchall()}
        untagged = con.execute("select count(*) from ledger_focus where x_team = '(unallocated)'").fetchone()[0]
    finally:
        con.close()
    assert "(unallocated)" in teams and untagged > 0
    assert {"platform", "research"} <= teams  # resolved from business_unit / org tag aliases


def build_doctored(root: Path, focus_home: dict) -> dict:
    """A doctored re-delivery refreshed on a copy of the shared good home (a tests/prefetch.py job)."""
    home = copy_home(focus_home["home"], root / "home")
    before = shutil.copy(home / "serving.duckdb", root / "serving_before_bad_run.duckdb")
    # Re-delivered export with one line's cost changed by +1.00: the invoice no longer matches.
    with open(FOCUS, newline="") as fh:
        rows = list(csv.reader(fh))
    idx = rows[0].index("BilledCost")
    rows[5][idx] = str(Decimal(rows[5][idx]) + 1)
    buffer = io.StringIO()
    csv.writer(buffer, quoting=csv.QUOTE_MINIMAL, lineterminator="\n").writerows(rows)
    bad = _inputs(root / "bad", {"focus_redelivered.csv": buffer.getvalue().encode(),
                                 "invoice_totals.csv": SAMPLES / "billing" / "invoice_totals.csv"})
    ok, _, reason = execute_refresh(home, bad, docs=False)
    return {"home": home, "before": Path(before), "ok": ok, "reason": reason}


@pytest.fixture(scope="module")
def e2e_doctored(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("e2e_doctored", tmp_path_factory)


def test_doctored_export_fails_conservation_and_keeps_last_publication(focus_home: dict, e2e_doctored: dict) -> None:
    # The good refresh is the shared focus_home; the bad one ran on a copy of it (build_doctored),
    # whose serving.duckdb was saved as `before` just ahead of the bad run.
    assert focus_home["ok"]
    home = e2e_doctored["home"]
    before = e2e_doctored["before"].read_bytes()
    ok, reason = e2e_doctored["ok"], e2e_doctored["reason"]
    assert not ok
    assert "ledger_dbt_assets" in reason
    # The error itself names the blocking check that failed, not only a count of them.
    assert "(1 failing tests: assert_ledger_matches_invoice_totals: " in reason, reason
    assert (home / "serving.duckdb").read_bytes() == before
    status = json.loads((home / "last_refresh.json").read_text())
    assert status["ok"] is False
    con = duckdb.connect(str(home / "ledger.duckdb"), read_only=True)
    try:
        failed = {r[0] for r in con.execute("select check_name from audit.check_results where not passed").fetchall()}
    finally:
        con.close()
    assert "assert_ledger_matches_invoice_totals" in failed


def build_unreadable(root: Path) -> dict:
    """FOCUS sample + an unreadable file on a fresh home (a tests/prefetch.py job)."""
    inputs = _inputs(root, {FOCUS.name: FOCUS, "garbage.csv": b"\x00\x01\x02 not a bill \xff\xfe\n" * 10})
    home = root / "home"
    ok, _, reason = execute_refresh(home, inputs, docs=False)
    return {"home": home, "ok": ok, "reason": reason}


@pytest.fixture(scope="module")
def e2e_unreadable(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("e2e_unreadable", tmp_path_factory)


def test_unreadable_file_is_quarantined_and_others_publish(e2e_unreadable: dict) -> None:
    home, ok, reason = e2e_unreadable["home"], e2e_unreadable["ok"], e2e_unreadable["reason"]
    assert ok, reason
    con = duckdb.connect(str(home / "serving.duckdb"), read_only=True)
    try:
        rejects = con.execute("select file_name, rule, message from dq_rejects").fetchall()
        lines = con.execute("select count(*) from ledger_focus").fetchone()[0]
    finally:
        con.close()
    assert lines == 1000
    assert [r[:2] for r in rejects] == [("garbage.csv", "unknown_format")]
    assert "garbage.csv" in rejects[0][2]


def test_the_run_is_recorded_in_the_homes_dagster_instance(sample_run: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """`dagster dev` on HOME/dagster (make dev sets DAGSTER_HOME) sees the CLI's run, its materializations and
    checks."""
    import dagster as dg

    from pipelines.dagster_storage import PooledSqliteEventLogStorage

    monkeypatch.setenv("DAGSTER_HOME", str(sample_run["home"] / "dagster"))  # dagster.yaml's paths are relative
    with dg.DagsterInstance.local_temp(tempdir=str(sample_run["home"] / "dagster")) as instance:
        assert isinstance(instance.event_log_storage, PooledSqliteEventLogStorage)  # HOME/dagster/dagster.yaml
        run = instance.get_run_by_id(sample_run["run_id"])
        assert run is not None and run.status == dg.DagsterRunStatus.SUCCESS and run.job_name == "nightly"
        published = instance.get_latest_materialization_event(dg.AssetKey(["serving", "publication"]))
        assert published is not None and published.run_id == sample_run["run_id"]
        chargeback = instance.get_latest_materialization_event(dg.AssetKey(["marts", "fct_chargeback_monthly"]))
        assert chargeback is not None and chargeback.run_id == sample_run["run_id"]
