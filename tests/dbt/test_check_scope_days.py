"""Checks that join several models on the hour or the day read the UTC days built since they last
passed (macro days_built_since_last_pass in dbt/macros/check_scope.sql), and still see an impossible
number on such a day, an earlier one included.

On a copy of the sample ledger (scontrol pool `slurm:(default)`, node a100gpu1 with 4 physical GPUs,
node hours 2024-04-03..19) a passing check is recorded between two builds: every day of
int_gpu_node_hours, int_gpu_usage_hourly and int_gpu_usage_unbilled is stamped as built before it,
except EARLIER (2024-04-05), rebuilt after it as a restated file for that day would be. Each of EARLIER
and LATER (2024-04-10, not rebuilt since the pass) gets one impossible number per check:
- assert_gpu_hour_in_one_pool: a telemetry hour of a100gpu1 at 10:00 in pool `slurm:other`, beside its
  node hour in `slurm:(default)` (one GPU-hour in two pools);
- assert_gpu_capacity_within_physical_gpus: a GPU bill line on a100gpu1 at 10:00 billing 4 GPU-hours in
  its node's pool: 4 (node) + 4 (bill) = 8 GPU-hours on 4 physical GPUs;
- assert_usage_gpu_hours_counted_once: one unbilled row 1 GPU-hour over its allocated hours.
BILLED (2024-04-13) gets a capacity breach too, from a bill file loaded after the pass (audit.file_loads):
the bill hours are rebuilt whole, so their day is in scope by file, not by stamp.
Nightly: EARLIER (and BILLED for capacity) is found, LATER is not. `--full-refresh`: every day.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.dbt.ledger_nodes import copy_ledger, run_checks

CHECKS = ("assert_gpu_hour_in_one_pool", "assert_gpu_capacity_within_physical_gpus",
          "assert_usage_gpu_hours_counted_once")
BUILT_BEFORE, PASSED, BUILT_AFTER = "2026-01-01 00:00:00", "2026-01-02 00:00:00", "2026-01-03 00:00:00"
EARLIER, LATER, BILLED = "2024-04-05", "2024-04-10", "2024-04-13"
NODE = "a100gpu1"


def _run(ledger: Path, checks: tuple[str, ...], *extra: str, command: str = "test") -> dict[str, tuple[str, set[str]]]:
    """Per check (`checks` in one dbt invocation): its dbt status and the days of the rows its compiled SQL
    returns."""
    found = {}
    for check, (status, names, rows) in run_checks(ledger, checks, *extra, target=ledger.parent / "target",
                                                   command=command).items():
        column = names.index("hour_start") if "hour_start" in names else names.index("day")
        found[check] = (status, {str(row[column])[:10] for row in rows})
    return found


def _doctor(con: duckdb.DuckDBPyConnection) -> None:
    """Stamps, the passing record and the impossible numbers of the module doc."""
    for table, day in (("int_gpu_node_hours", "day"), ("int_gpu_usage_hourly", "usage_date"),
                       ("int_gpu_usage_unbilled", "day")):
        con.execute(f"update intermediate.{table} set x_built_at = case when {day} = ? then ?::timestamp "
                    "else ?::timestamp end", [EARLIER, BUILT_AFTER, BUILT_BEFORE])
    con.execute("update audit.file_loads set loaded_at = ?::timestamp", [BUILT_BEFORE])
    con.execute("insert into audit.file_loads (file_hash, family, loaded_at) values ('late-bill', 'billing', ?)",
                [BUILT_AFTER])
    for day in (EARLIER, LATER, BILLED):
        hour, stamp = f"{day} 10:00:00", BUILT_AFTER if day == EARLIER else BUILT_BEFORE
        # 4 GPU-hours billed on the node's host in its own pool, on top of its 4 node GPU-hours
        con.execute("insert into intermediate.int_gpu_billing_hours_mapped select * replace ("
                    "?::timestamp as hour_start, 'slurm:(default)' as pool_id, ? as resource_id, ? as resource_name, "
                    "4.0 as billed_gpu_hours, 4.0 as gpu_count, ? as x_file_hash) "
                    "from intermediate.int_gpu_billing_hours_mapped order by x_charge_key limit 1",
                    [hour, NODE, NODE, "late-bill" if day == BILLED else "old-bill"])
        if day == BILLED:
            continue
        # the node's GPU-hour in a second pool
        con.execute("insert into intermediate.int_gpu_usage_hourly select * replace ("
                    "?::timestamp as hour_start, ?::date as usage_date, 'slurm:other' as pool_id, ? as host_key, "
                    "?::timestamp as x_built_at) from intermediate.int_gpu_usage_hourly "
                    "where allocation_basis = 'telemetry' order by all limit 1", [hour, day, NODE, stamp])
        # one unbilled GPU-hour more than the day's allocated hours
        con.execute("update intermediate.int_gpu_usage_unbilled set unbilled_gpu_hours = unbilled_gpu_hours + 1 "
                    "where usage_day_id = (select min(usage_day_id) from intermediate.int_gpu_usage_unbilled "
                    "where day = ?)", [day])
    con.execute("delete from audit.check_results where check_name in (select unnest(?))", [list(CHECKS)])
    for check in CHECKS:
        con.execute("insert into audit.check_results (run_id, check_name, target, severity, passed, detail, "
                    "checked_at, status) values ('r-pass', ?, 'dbt', 'error', true, '', ?::timestamp, 'pass')",
                    [check, PASSED])


@pytest.fixture(scope="module")
def runs(sample_run: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Each check on the doctored ledger, nightly and with --full-refresh."""
    assert sample_run["ok"], sample_run["reason"]
    base = tmp_path_factory.mktemp("check_scope_days")
    ledger = copy_ledger(sample_run["home"], base / "nightly")
    con = duckdb.connect(str(ledger))
    try:
        _doctor(con)
    finally:
        con.close()
    full = copy_ledger(ledger.parent, base / "full")
    # `dbt test` takes no --full-refresh, and a `dbt build` skips the checks downstream of one that failed:
    # one build per check
    nightly = _run(ledger, CHECKS)
    rebuilt = {c: _run(full, (c,), "--full-refresh", command="build")[c] for c in CHECKS}
    return {check: {"nightly": nightly[check], "full": rebuilt[check]} for check in CHECKS}


@pytest.mark.parametrize("check", CHECKS)
def test_the_nightly_check_fails_on_an_earlier_day_rebuilt_since_it_passed(runs: dict, check: str) -> None:
    status, days = runs[check]["nightly"]
    assert status == "fail"
    # LATER's impossible number is not read: that day passed and no build touched it since
    expected = {EARLIER, BILLED} if check == "assert_gpu_capacity_within_physical_gpus" else {EARLIER}
    assert days == expected


@pytest.mark.parametrize("check", CHECKS)
def test_a_full_refresh_checks_every_day(runs: dict, check: str) -> None:
    status, days = runs[check]["full"]
    assert status == "fail"
    # BILLED's late bill is in the node's own pool: a capacity breach only
    expected = {EARLIER, LATER} | ({BILLED} if check == "assert_gpu_capacity_within_physical_gpus" else set())
    assert days == expected
