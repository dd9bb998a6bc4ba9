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
from tests.conftest import SAMPLES, published_tables

pytestmark = pytest.mark.e2e
FOCUS = SAMPLES / "billing" / "focus_1.0_sample_1000_multicloud.csv"


def _inputs(tmp: Path, billing_files: dict[str, bytes | Path]) -> Path:
    """An inputs folder with the sample registry and the given billing files."""
    inputs = tmp / "inputs"
    shutil.copytree(SAMPLES / "registry", inputs / "registry")
    (inputs / "billing").mkdir(parents=True)
    for name, content in billing_files.items():
        target = inputs / "billing" / name
        if isinstance(content, Path):
            shutil.copy(content, target)
        else:
            target.write_bytes(content)
    return inputs


def test_sample_run_publishes_every_foundation_table(sample_run: dict) -> None:
    assert sample_run["ok"], sample_run["reason"]
    con = duckdb.connect(str(sample_run["home"] / "serving.duckdb"), read_only=True)
    try:
        tables = {r[0] for r in con.execute("select table_name from information_schema.tables").fetchall()}
        for t in ("ledger_focus", "fct_chargeback_monthly", "fct_workload_unit_cost", "publication", "dq_rejects"):
            assert t in tables, f"{t} not published"
        run_id, checks_run, checks_passed = con.execute(
            "select run_id, checks_run, checks_passed from publication").fetchone()
        assert run_id == sample_run["run_id"]
        assert checks_run == checks_passed and checks_run > 20
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
        chargeback = dict(con.execute(
            "select billing_period_start, sum(total_cost) from fct_chargeback_monthly where currency = 'USD' "
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


def test_rerun_publishes_identical_numbers(tmp_path: Path) -> None:
    inputs = _inputs(tmp_path, {FOCUS.name: FOCUS, "invoice_totals.csv": SAMPLES / "billing" / "invoice_totals.csv"})
    home = tmp_path / "home"
    assert execute_refresh(home, inputs)[0]
    first = published_tables(home / "serving.duckdb")
    assert execute_refresh(home, inputs)[0]
    second = published_tables(home / "serving.duckdb")
    assert first == second
    assert len(first["ledger_focus"]) == 1000


def test_doctored_export_fails_conservation_and_keeps_last_publication(tmp_path: Path) -> None:
    home = tmp_path / "home"
    good = _inputs(tmp_path / "good", {FOCUS.name: FOCUS, "invoice_totals.csv": SAMPLES / "billing" / "invoice_totals.csv"})
    assert execute_refresh(home, good)[0]
    before = (home / "serving.duckdb").read_bytes()
    # Re-delivered export with one line's cost changed by +1.00: the invoice no longer matches.
    with open(FOCUS, newline="") as fh:
        rows = list(csv.reader(fh))
    idx = rows[0].index("BilledCost")
    rows[5][idx] = str(Decimal(rows[5][idx]) + 1)
    buffer = io.StringIO()
    csv.writer(buffer, quoting=csv.QUOTE_MINIMAL, lineterminator="\n").writerows(rows)
    bad = _inputs(tmp_path / "bad", {"focus_redelivered.csv": buffer.getvalue().encode(),
                                      "invoice_totals.csv": SAMPLES / "billing" / "invoice_totals.csv"})
    ok, _, reason = execute_refresh(home, bad)
    assert not ok
    assert "ledger_dbt_assets" in reason
    assert (home / "serving.duckdb").read_bytes() == before
    status = json.loads((home / "last_refresh.json").read_text())
    assert status["ok"] is False
    con = duckdb.connect(str(home / "ledger.duckdb"), read_only=True)
    try:
        failed = {r[0] for r in con.execute("select check_name from audit.check_results where not passed").fetchall()}
    finally:
        con.close()
    assert "assert_ledger_matches_invoice_totals" in failed


def test_unreadable_file_is_quarantined_and_others_publish(tmp_path: Path) -> None:
    inputs = _inputs(tmp_path, {FOCUS.name: FOCUS, "garbage.csv": b"\x00\x01\x02 not a bill \xff\xfe\n" * 10})
    home = tmp_path / "home"
    ok, _, reason = execute_refresh(home, inputs)
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
