"""A decision without a back-test on today's setup is a loud warning, never a silently missing row.

On the samples every workload billed on a GPU shape has its back-test (the check passes). On a copy of
the sample ledger doctored two ways, the warning names each workload and why: chat-assistant-70b's bill
lines moved to GBP with no GBP rate published (its back-test cannot be priced), batch-summarise-70b's
back-test row removed with its lines still in USD (no priced shape).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from pipelines.dbt_project import ledger_dbt, ledger_dbt_executable
from warehouse.home import DBT_DIR

pytestmark = pytest.mark.e2e
TEST = "assert_today_shape_back_tested"


def test_samples_have_every_back_test(sample_run: dict) -> None:
    assert sample_run["ok"], sample_run["reason"]
    con = duckdb.connect(str(Path(sample_run["home"]) / "serving.duckdb"), read_only=True)
    try:
        assert con.execute("select status from check_results where check_name = ?", [TEST]).fetchall() == [("pass",)]
    finally:
        con.close()


def test_a_missing_back_test_is_listed_with_its_reason(sample_run: dict, tmp_path: Path) -> None:
    assert sample_run["ok"], sample_run["reason"]
    ledger = tmp_path / "ledger.duckdb"
    shutil.copy(Path(sample_run["home"]) / "ledger.duckdb", ledger)
    con = duckdb.connect(str(ledger))
    try:
        keys = "select x_charge_key from intermediate.int_gpu_billing_hours_mapped where workload_id = ?"
        con.execute(f"update marts.ledger_focus set BillingCurrency = 'GBP' where x_charge_key in ({keys})",
                    ["chat-assistant-70b"])
        con.execute("delete from marts.fct_fx_rates_daily where currency = 'GBP'")
        first = con.execute(f"select min(cast(ChargePeriodStart as date)) from marts.ledger_focus "
                            f"where x_charge_key in ({keys})", ["chat-assistant-70b"]).fetchone()[0]
        con.execute("delete from marts.fct_candidate_comparison where route_kind = 'today_shape' "
                    "and workload_id in ('chat-assistant-70b', 'batch-summarise-70b')")
    finally:
        con.close()
    target = tmp_path / "target"
    target.mkdir()
    shutil.copy(ledger_dbt.manifest_path.parent / "partial_parse.msgpack", target)
    done = subprocess.run(
        [ledger_dbt_executable(), "--in", str(tmp_path), "test", "--select", TEST,
         "--project-dir", str(DBT_DIR), "--profiles-dir", str(DBT_DIR), "--target-path", str(target),
         "--log-path", str(tmp_path), "--vars", json.dumps({"ledger_db": ledger.name})],
        capture_output=True, text=True, timeout=600, check=False)
    (result,) = [r for r in json.loads((target / "run_results.json").read_text())["results"]
                 if r["unique_id"].startswith(f"test.gpu_ledger.{TEST}")]
    assert (result["status"], result["failures"]) == ("warn", 2), done.stdout[-3000:]
    (compiled,) = list((target / "compiled").rglob(f"{TEST}.sql"))
    con = duckdb.connect(str(ledger), read_only=True)
    try:
        rows = sorted(con.execute(compiled.read_text()).fetchall())
    finally:
        con.close()
    assert rows == [
        ("batch-summarise-70b", "no billed instance shape with a price in the demand month"),
        ("chat-assistant-70b", f"a GBP bill line has no exchange rate for its charge day (first {first})"),
    ]
