"""assert_gpu_hours_priced_once reads the cost-line months built since it last passed, and the bill lines of
those months or of a file loaded since the pass (macros days_built_since_last_pass and whole_months), and
still sees a bill line priced wrongly there.

On a copy of the sample ledger (cost lines in 2025-03 and 2025-04; GPU bill lines in 2025-04 only) a
passing check is recorded between two builds: the cost lines of March are stamped as built after it, April's
before it, and every file as loaded before it. Three bill lines are priced wrongly:
- MARCH: a copy of an April GPU bill line moved to March (file `old-bill`, loaded before the pass): no cost
  line prices it; March was rebuilt since the pass, so it is read;
- APRIL: an April bill line whose gpu_compute line is doctored 1.00 higher in fct_workload_cost_lines;
  April was not rebuilt since the pass and no file of it was loaded since: not read;
- MAY: a copy moved to May from file `late-bill`, loaded after the pass: its month is read by file.
Nightly: MARCH and MAY are found, APRIL is not. `--full-refresh`: all three.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.dbt.ledger_nodes import copy_ledger, run_checks

CHECK = "assert_gpu_hours_priced_once"
BUILT_BEFORE, PASSED, BUILT_AFTER = "2026-01-01 00:00:00", "2026-01-02 00:00:00", "2026-01-03 00:00:00"
MARCH, MAY = "march-line", "may-line"
GPU_LINE = ("from marts.ledger_focus where x_workload_id is not null and x_gpu_model is not null "
            "and ChargeCategory = 'Usage'")


def _run(ledger: Path, *extra: str, command: str = "test") -> tuple[str, set[str]]:
    """The check's dbt status and the bill lines (keys) its compiled SQL finds priced wrongly."""
    status, names, rows = run_checks(ledger, (CHECK,), *extra, target=ledger.parent / "target",
                                     command=command)[CHECK]
    failure, ref = names.index("failure"), names.index("ref")
    return status, {r[ref] for r in rows if r[failure].startswith("bill line priced")}


def _doctor(con: duckdb.DuckDBPyConnection) -> str:
    """Stamps, the passing record and the three wrongly priced bill lines of the module doc; APRIL's key."""
    con.execute("update intermediate.int_workload_cost_lines set x_built_at = case when period = '2025-03-01' "
                "then ?::timestamp else ?::timestamp end", [BUILT_AFTER, BUILT_BEFORE])
    con.execute("update audit.file_loads set loaded_at = ?::timestamp", [BUILT_BEFORE])
    con.execute("insert into audit.file_loads (file_hash, family, loaded_at) values ('late-bill', 'billing', ?)",
                [BUILT_AFTER])
    (april,) = con.execute(f"select min(x_charge_key) {GPU_LINE}").fetchone()
    for key, months, file_hash in ((MARCH, -1, "old-bill"), (MAY, 1, "late-bill")):
        shift = f"interval {abs(months)} month"
        sign = "-" if months < 0 else "+"
        con.execute(f"insert into marts.ledger_focus select * replace (? as x_charge_key, ? as x_file_hash, "
                    f"ChargePeriodStart {sign} {shift} as ChargePeriodStart, "
                    f"ChargePeriodEnd {sign} {shift} as ChargePeriodEnd) {GPU_LINE} and x_charge_key = ?",
                    [key, file_hash, april])
    changed = con.execute("update marts.fct_workload_cost_lines set amount = amount + 1 "
                          "where source_kind = 'bill_line' and source_ref = ?", [april]).fetchone()[0]
    assert changed == 1, changed  # its gpu_compute line (no idle share on the sample's line)
    con.execute("delete from audit.check_results where check_name = ?", [CHECK])
    con.execute("insert into audit.check_results (run_id, check_name, target, severity, passed, detail, "
                "checked_at, status) values ('r-pass', ?, 'dbt', 'error', true, '', ?::timestamp, 'pass')",
                [CHECK, PASSED])
    return april


@pytest.fixture(scope="module")
def doctored(sample_run: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Copies of the sample ledger with the stamps, the pass and the three bill lines (module doc)."""
    assert sample_run["ok"], sample_run["reason"]
    base = tmp_path_factory.mktemp("check_scope_months")
    ledger = copy_ledger(sample_run["home"], base / "nightly")
    con = duckdb.connect(str(ledger))
    try:
        april = _doctor(con)
    finally:
        con.close()
    full = copy_ledger(ledger.parent, base / "full")
    return {"april": april, "nightly": _run(ledger), "full": _run(full, "--full-refresh", command="build")}


def test_the_nightly_check_reads_the_months_built_or_billed_since_it_passed(doctored: dict) -> None:
    status, found = doctored["nightly"]
    assert status == "fail"
    # April passed, and neither a build nor a bill file touched it since: its doctored line is not read
    assert found == {MARCH, MAY}


def test_a_full_refresh_checks_every_month(doctored: dict) -> None:
    status, found = doctored["full"]
    assert status == "fail"
    assert found == {MARCH, doctored["april"], MAY}
