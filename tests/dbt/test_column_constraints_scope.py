"""A model's column_constraints test reads the rows built since it last passed, and still catches a new
row repeating an old row's key.

On a copy of the sample ledger, two models carrying the build stamp `x_built_at` are stamped as if a
passing test ran between their builds (macro rows_built_since_last_pass, dbt/macros/check_scope.sql):
the earliest usage day (job day) with three rows (two) before the pass, the next one after it. Doctored rows:
- int_gpu_usage_hourly (a three-column unique key): a copy of an old day's row written on the rebuilt
  day (same key: gpu_key, hour_start, allocation_key); a null team_id on the rebuilt day; a null
  team_id and a duplicated key on the old day.
- int_gpu_jobs_attributed (a one-column unique key): a copy of an old day's job on the rebuilt day
  (same job_key); a null team_id on the old day.
Nightly (the tests passed before): the rebuilt day's faults and the keys the rebuilt rows share with old
rows are found, the old day's own faults are not (they were read by the passing run, and no build
touched them since). `--full-refresh`, or a pass under other rules: every fault is found.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.dbt.ledger_nodes import copy_ledger, run_checks

USAGE = "column_constraints_int_gpu_usage_hourly_"
JOBS = "column_constraints_int_gpu_jobs_attributed_"
BUILT_BEFORE, PASSED, BUILT_AFTER = "2026-01-01 00:00:00", "2026-01-02 00:00:00", "2026-01-03 00:00:00"
USAGE_KEY = "concat_ws('|', gpu_key, cast(hour_start as varchar), allocation_key)"


def _run(ledger: Path, checks: tuple[str, ...], *extra: str,
         command: str = "test") -> dict[str, tuple[str, set[tuple], str]]:
    """Per test: its dbt status, its failing rows as (constraint, column, value, rows breaking it) and its
    compiled SQL."""
    target = ledger.parent / "target"
    found = run_checks(ledger, checks, *extra, target=target, command=command)
    out = {}
    for check, (status, names, rows) in found.items():
        (compiled,) = (target / "compiled").rglob(f"{check}.sql")
        out[check] = (status, {(r[names.index("constraint_type")], r[names.index("column_name")],
                                r[names.index("value")], r[names.index("failing_rows")]) for r in rows},
                      compiled.read_text())
    return out


@pytest.fixture(scope="module")
def doctored(sample_run: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Copies of the sample ledger with the stamped days and the doctored rows (module doc); both runs."""
    assert sample_run["ok"], sample_run["reason"]
    base = tmp_path_factory.mktemp("column_constraints_scope")
    ledger = copy_ledger(sample_run["home"], base / "nightly")
    con = duckdb.connect(str(ledger))
    try:
        u = "intermediate.int_gpu_usage_hourly"
        old, new = [r[0] for r in con.execute(f"select usage_date from {u} group by 1 having count(*) >= 3 order by 1 limit 2").fetchall()]
        con.execute(f"update {u} set x_built_at = case when usage_date = ? then ?::timestamp else ?::timestamp end",
                    [new, BUILT_AFTER, BUILT_BEFORE])
        first_old = f"(select {USAGE_KEY} from {u} where usage_date = ? order by all limit 1)"
        repeated = con.execute(f"select {first_old}", [old]).fetchone()[0]
        # the rebuilt day writes a row with an old day's key
        con.execute(f"insert into {u} by name select * replace (?::date as usage_date, ?::timestamp as x_built_at) "
                    f"from {u} where {USAGE_KEY} = ?", [new, BUILT_AFTER, repeated])
        # the old day: its second row duplicated (as old as the pass) and its last row's team lost
        old_dup = con.execute(f"select {USAGE_KEY} from {u} where usage_date = ? order by all limit 1 offset 1",
                              [old]).fetchone()[0]
        con.execute(f"insert into {u} by name select * from {u} where {USAGE_KEY} = ?", [old_dup])
        con.execute(f"update {u} set team_id = null where {USAGE_KEY} = (select max({USAGE_KEY}) from {u} "
                    "where usage_date = ?)", [old])
        # the rebuilt day: a row's team lost
        con.execute(f"update {u} set team_id = null where {USAGE_KEY} = (select max({USAGE_KEY}) from {u} "
                    f"where usage_date = ? and {USAGE_KEY} <> ?)", [new, repeated])

        j = "intermediate.int_gpu_jobs_attributed"
        jold, jnew = [r[0] for r in con.execute(f"select x_job_day from {j} group by 1 having count(*) >= 2 order by 1 limit 2").fetchall()]
        con.execute(f"update {j} set x_built_at = case when x_job_day = ? then ?::timestamp else ?::timestamp end",
                    [jnew, BUILT_AFTER, BUILT_BEFORE])
        job = con.execute(f"select min(job_key) from {j} where x_job_day = ?", [jold]).fetchone()[0]
        con.execute(f"insert into {j} by name select * replace (?::date as x_job_day, ?::timestamp as x_built_at) "
                    f"from {j} where job_key = ?", [jnew, BUILT_AFTER, job])
        con.execute(f"update {j} set team_id = null where job_key = (select max(job_key) from {j} "
                    "where x_job_day = ?)", [jold])

        # the pass under the rules the build compiled (their digest, as the pipeline recorded it)
        digests = dict(con.execute("select check_name, any_value(rules_digest) from audit.check_results "
                                   "where check_name in (?, ?) and status = 'pass' group by 1", [USAGE, JOBS]).fetchall())
        assert all(digests.get(check) for check in (USAGE, JOBS)), digests
        con.execute("delete from audit.check_results where check_name in (?, ?)", [USAGE, JOBS])
        for check in (USAGE, JOBS):
            con.execute("insert into audit.check_results (run_id, check_name, target, severity, passed, detail, "
                        "checked_at, status, rules_digest) values ('r-pass', ?, 'dbt', 'error', true, '', "
                        "?::timestamp, 'pass', ?)", [check, PASSED, digests[check]])
    finally:
        con.close()
    full = copy_ledger(ledger.parent, base / "full")
    changed = copy_ledger(ledger.parent, base / "changed")
    con = duckdb.connect(str(changed))
    try:  # the pass was under other rules (a column's check added in yml since)
        con.execute("update audit.check_results set rules_digest = md5('earlier rules') where check_name = ?", [USAGE])
    finally:
        con.close()
    # `dbt build` skips a test of a model downstream of a failing test's model: one command per test
    return {"repeated": repeated, "old_dup": old_dup, "job": job, "nightly": _run(ledger, (USAGE, JOBS)),
            "changed": _run(changed, (USAGE,))[USAGE],
            "full": {**_run(full, (USAGE,), "--full-refresh", command="build"),
                     **_run(full, (JOBS,), "--full-refresh", command="build")}}


def test_a_rebuilt_row_repeating_an_old_rows_key_fails_the_nightly_test(doctored: dict) -> None:
    status, rows, _ = doctored["nightly"][USAGE]
    assert status == "fail"
    # the rebuilt day's null team and the key it shares with the old day; the old day's own null team
    # and its duplicate (passed, untouched since) are not read
    assert rows == {("not_null", "team_id", None, 1),
                    ("unique", "gpu_key, hour_start, allocation_key", doctored["repeated"], 2)}
    status, rows, _ = doctored["nightly"][JOBS]
    assert status == "fail"
    assert rows == {("unique", "job_key", doctored["job"], 2)}


def test_the_nightly_test_reads_the_rows_built_since_it_passed(doctored: dict) -> None:
    for check in (USAGE, JOBS):
        sql = doctored["nightly"][check][2]
        # the null and value rules read the stamped rows, the keys are those of the stamped rows
        assert f"x_built_at > cast('{PASSED}' as timestamp)" in sql
        assert sql.count("x_built_at >") == 2


def test_a_full_refresh_reads_every_row(doctored: dict) -> None:
    status, rows, sql = doctored["full"][USAGE]
    assert status == "fail"
    assert rows == {("not_null", "team_id", None, 2),
                    ("unique", "gpu_key, hour_start, allocation_key", doctored["repeated"], 2),
                    ("unique", "gpu_key, hour_start, allocation_key", doctored["old_dup"], 2)}
    assert "x_built_at" not in sql
    status, rows, _ = doctored["full"][JOBS]
    assert status == "fail"
    assert rows == {("not_null", "team_id", None, 1), ("unique", "job_key", doctored["job"], 2)}


def test_a_pass_under_other_rules_reads_every_row(doctored: dict) -> None:
    status, rows, sql = doctored["changed"]
    assert status == "fail"
    assert rows == {("not_null", "team_id", None, 2),
                    ("unique", "gpu_key, hour_start, allocation_key", doctored["repeated"], 2),
                    ("unique", "gpu_key, hour_start, allocation_key", doctored["old_dup"], 2)}
    assert "x_built_at" not in sql
