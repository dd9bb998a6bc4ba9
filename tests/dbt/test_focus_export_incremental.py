"""The FOCUS export rows are incremental by charge day (int_focus_export_rows): a night compares the stored
rows with the splits of the billing periods int_focus_allocation_splits rebuilt since the export's last build
(their x_built_at), and of the periods the splits hold no more, not with every split of the history; it
rebuilds the days whose splits changed, deletes the ones left without a split, and its rows, and the published
fct_focus_export, equal a `--full-refresh` build of the same inputs.

On a copy of the sample ledger (splits in 5 billing periods: 2023-09, 2023-11, 2024-09, 2024-10, 2025-04) the
inputs are changed and the splits, the export rows and fct_focus_export alone are run, incrementally and with
`--full-refresh` on a copy:
- int_chargeback_lines: team platform's September 2024 direct cost grows by 10 USD (an earlier period restated:
  the weight its untagged credit of 2024-09-24 is spread by);
- int_chargeback_lines: team platform has no April 2025 chargeback any more (its parts of the two untagged
  credits of 2025-04-15 vanish);
- ledger_focus: the September 2023 lines are gone (a re-delivery without them);
- int_focus_allocation_splits: one split of 2023-11 edited in place with its build stamp kept (no build wrote
  it): the night does not read that period, since the splits did not rebuild it.
Expected: the splits rebuild 2024-09 and 2025-04 and delete 2023-09; the export rebuilds 2024-09-24 and
2025-04-15 and deletes 2023-09-02, no other day.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from tests.dbt.ledger_nodes import copy_ledger, nightly_and_full, rebuilt_periods, run_checks, run_models

MODELS = ["int_focus_allocation_splits", "int_focus_export_rows", "fct_focus_export"]
CREDIT_2024_09 = "e91e5ac7edf01ed2c9d926f37ef7dc1ae2aae97956fea8da6c9ee488b1c2839e:458"
CREDITS_2025_04 = ("91e54216ebb0472bae7a9af253630c1b8538e9c037eef159bbcb4f3a653ce6e7:14",
                   "91e54216ebb0472bae7a9af253630c1b8538e9c037eef159bbcb4f3a653ce6e7:15")
CHANGES = [
    "update intermediate.int_chargeback_lines set amount = amount + 10 where rowid = (select min(rowid) from "
    "intermediate.int_chargeback_lines where billing_period_start = '2024-09-01' and team_id = 'platform' "
    "and line_kind = 'direct_cost' and basis = 'amortised')",
    "delete from intermediate.int_chargeback_lines where billing_period_start = '2025-04-01' and team_id = 'platform'",
    "delete from marts.ledger_focus where cast(BillingPeriodStart as date) = '2023-09-01'",
    "update intermediate.int_focus_allocation_splits set weight = weight + 1 where rowid = (select min(rowid) "
    "from intermediate.int_focus_allocation_splits where x_billing_period = '2023-11-01')",
]


def _run(ledger: Path, *extra: str) -> None:
    """Run the three models (alone, one dbt command) on `ledger`; asserts each succeeded."""
    run_models(ledger, list(MODELS), *extra)


def _read(ledger: Path) -> dict:
    con = duckdb.connect(str(ledger), read_only=True)
    try:
        return {
            "splits": {str(p): (n, stamp) for p, n, stamp in con.execute(
                "select x_billing_period, count(*), max(x_built_at) from intermediate.int_focus_allocation_splits "
                "group by all").fetchall()},
            "days": {str(d): (n, stamp) for d, n, stamp in con.execute(
                "select x_charge_day, count(*), max(x_built_at) from intermediate.int_focus_export_rows "
                "group by all").fetchall()},
            "rows": con.execute("select * exclude (x_built_at, x_loaded_at) from intermediate.int_focus_export_rows "
                                "order by all").fetchall(),
            "published": con.execute("select * from marts.fct_focus_export order by all").fetchall(),
            "credits": con.execute(
                "select x_charge_key, x_team, x_split_weight, x_split_weight_total, x_split_share "
                "from intermediate.int_focus_export_rows where x_charge_key in "
                f"('{CREDIT_2024_09}', '{CREDITS_2025_04[0]}', '{CREDITS_2025_04[1]}') order by all").fetchall(),
        }
    finally:
        con.close()


@pytest.fixture(scope="module")
def steps(sample_run: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    assert sample_run["ok"], sample_run["reason"]
    base = tmp_path_factory.mktemp("focus_export")
    return nightly_and_full(Path(sample_run["home"]), base, CHANGES, _run, _read)


def _rebuilt_and_gone(steps: dict, key: str) -> tuple[list[str], list[str]]:
    """(periods stamped after every stamp before, periods gone); every other period keeps its rows and stamp."""
    before, after = steps["before"][key], steps["after"][key]
    return rebuilt_periods(before, after), sorted(set(before) - set(after))


def test_the_splits_rebuild_the_changed_periods_only(steps: dict) -> None:
    assert sorted(steps["before"]["splits"]) == ["2023-09-01", "2023-11-01", "2024-09-01", "2024-10-01",
                                                 "2025-04-01"]
    assert _rebuilt_and_gone(steps, "splits") == (["2024-09-01", "2025-04-01"], ["2023-09-01"])


def test_the_export_rebuilds_the_changed_days_of_the_rebuilt_periods_only(steps: dict) -> None:
    # 2023-11-13 (the split edited without a build) is not read: the splits did not rebuild 2023-11
    assert len(steps["before"]["days"]) > 30
    assert _rebuilt_and_gone(steps, "days") == (["2024-09-24", "2025-04-15"], ["2023-09-02"])


def test_the_changed_splits_are_exported(steps: dict) -> None:
    d = Decimal
    # 2024-09-24's credit: platform's weight 16 + 10 = 26; research 1.976514185860; total 26 + 1.976514185860
    # = 27.976514185860; shares 26 / 27.976514185860 = 0.929350948702 and 1.976514185860 / 27.976514185860
    # = 0.070649051298 (to 12 decimals, as the split casts them)
    # 2025-04-15's two credits: support alone (3,499.261049195360 of 3,499.261049195360: share 1); platform's
    # parts are gone
    support = d("3499.261049195360")
    assert steps["after"]["credits"] == sorted([
        (CREDIT_2024_09, "platform", d("26.000000000000"), d("27.976514185860"), d("0.929350948702")),
        (CREDIT_2024_09, "research", d("1.976514185860"), d("27.976514185860"), d("0.070649051298")),
        (CREDITS_2025_04[0], "support", support, support, d("1.000000000000")),
        (CREDITS_2025_04[1], "support", support, support, d("1.000000000000")),
    ])
    assert [(k, t) for k, t, *_ in steps["before"]["credits"] if k in CREDITS_2025_04] == [
        (CREDITS_2025_04[0], "platform"), (CREDITS_2025_04[0], "support"),
        (CREDITS_2025_04[1], "platform"), (CREDITS_2025_04[1], "support")]


@pytest.mark.parametrize("key", ["rows", "published"])
def test_the_rows_equal_a_full_rebuild(steps: dict, key: str) -> None:
    assert steps["after"][key] == steps["full"][key]
    assert steps["after"][key] != steps["before"][key]


# The partition check (assert_focus_export_partitions_ledger) reads the billing periods of the days built since
# it last passed (macro days_built_since_last_pass). On a copy of the sample ledger a pass is recorded between
# two builds: every export day is stamped before it but 2024-09-24 (rebuilt after it), and one 2025-04 ledger
# line comes from a bill file loaded after it. One published row of each of 2023-11, 2024-09 and 2025-04 is
# 1 USD off its ledger line. Nightly: 2024-09 (by stamp) and 2025-04 (by file) are found, 2023-11 (passed, not
# rebuilt since) is not; `--full-refresh`: every period.
CHECK = "assert_focus_export_partitions_ledger"
BUILT_BEFORE, PASSED, BUILT_AFTER = "2026-01-01 00:00:00", "2026-01-02 00:00:00", "2026-01-03 00:00:00"


def _doctor(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("update intermediate.int_focus_export_rows set x_built_at = case when x_charge_day = '2024-09-24' "
                "then ?::timestamp else ?::timestamp end", [BUILT_AFTER, BUILT_BEFORE])
    con.execute("update audit.file_loads set loaded_at = ?::timestamp", [BUILT_BEFORE])
    con.execute("insert into audit.file_loads (file_hash, family, loaded_at) values ('late-bill', 'billing', ?)",
                [BUILT_AFTER])
    con.execute("update marts.ledger_focus set x_file_hash = 'late-bill' where x_charge_key = ?", [CREDITS_2025_04[0]])
    for period in ("2023-11-01", "2024-09-01", "2025-04-01"):
        con.execute("update marts.fct_focus_export set BilledCost = BilledCost + 1 where x_export_row_id = ("
                    "select min(x_export_row_id) from marts.fct_focus_export "
                    "where cast(BillingPeriodStart as date) = ?)", [period])
    con.execute("delete from audit.check_results where check_name = ?", [CHECK])
    con.execute("insert into audit.check_results (run_id, check_name, target, severity, passed, detail, "
                "checked_at, status) values ('r-pass', ?, 'dbt', 'error', true, '', ?::timestamp, 'pass')",
                [CHECK, PASSED])


def _periods(ledger: Path, *extra: str, command: str = "test") -> tuple[str, set[str]]:
    (status, names, rows), = run_checks(ledger, (CHECK,), *extra, target=ledger.parent / "target",
                                        command=command).values()
    return status, {str(row[names.index("billing_period_start")]) for row in rows}


@pytest.fixture(scope="module")
def check_runs(sample_run: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    assert sample_run["ok"], sample_run["reason"]
    ledger = copy_ledger(Path(sample_run["home"]), tmp_path_factory.mktemp("focus_check") / "nightly")
    con = duckdb.connect(str(ledger))
    try:
        _doctor(con)
    finally:
        con.close()
    full = copy_ledger(ledger.parent, ledger.parent.parent / "full")
    return {"nightly": _periods(ledger), "full": _periods(full, "--full-refresh", command="build")}


def test_the_nightly_partition_check_reads_the_periods_rebuilt_or_billed_since_it_passed(check_runs: dict) -> None:
    assert check_runs["nightly"] == ("fail", {"2024-09-01", "2025-04-01"})


def test_a_full_refresh_checks_every_period(check_runs: dict) -> None:
    assert check_runs["full"] == ("fail", {"2023-11-01", "2024-09-01", "2025-04-01"})
