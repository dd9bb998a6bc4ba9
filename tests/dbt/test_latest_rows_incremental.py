"""A night of int_gpu_jobs_attributed and int_api_requests_allocated reads the latest rows of the keys on the
days it rebuilds only (macros/latest_rows.sql), and the latest restatement of a key still wins.

The sample inputs: hb_jobinfo_sacct_snowman_delim.txt holds 100 Slurm jobs (242 lines, 142 of them job
steps), the earliest on 2023-06-01 alone (1 job) and 8 on 2023-06-02; litellm_spend_logs_sample.csv holds
300 requests, 101 on 2025-04-14, 93 on 2025-04-15 and 106 on 2025-04-16. On a copy of the sample ledger:
- the job of the earliest day is restated (its accounting exported again with one GPU more) in a usage
  file loaded after the last build;
- the first job (by key) of the next job day has an earlier export dated on the restated job's day (loaded
  a day before the export that won, from a file already built): a stale raw row on the rebuilt day;
- every request of 2025-04-14 is re-exported one day earlier in an API file loaded after the last build
  (the day is left without requests), and that file brings one new request on 2025-04-16 without a
  request id (a row the model's not_null check must see);
- the first request (by id) of 2025-04-15 has an earlier export dated 2025-04-16 (loaded a day before the
  export that won, already built).
Both models alone are run as a night does, and with `--full-refresh` on a copy. Expected: the jobs' first
day is the only job day rebuilt, the restated job once with its restated GPUs; 2025-04-13 (101 requests)
and 2025-04-16 (106 + 1) are rebuilt, 2025-04-14 is gone and 2025-04-15 is untouched (93). A key read
for its stale row on a rebuilt day keeps its latest row, on a day not rebuilt, out of the night: with it,
that day would be replaced by this one row. The rows equal the full rebuild's, and the dedup window of
each night's SQL reads the raw rows of the keys on its days, not every row ever loaded. The request
without an id reaches the model, whose column check (the staging view's not_null, moved there) fails on it.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from tests.dbt.ledger_nodes import nightly_and_full, rebuilt_periods, run_checks, run_models

MODELS = {"int_gpu_jobs_attributed": "x_job_day", "int_api_requests_allocated": "x_request_day"}
# the job restated: the first Slurm job (by key) of the earliest day that is not the last day
JOB = ("select job_key, x_job_day from intermediate.int_gpu_jobs_attributed where scheduler = 'slurm' "
       "and x_job_day < (select max(x_job_day) from intermediate.int_gpu_jobs_attributed) "
       "and x_job_day > date '1971-01-01' order by x_job_day, job_key limit 1")
# the job with a stale export on the restated job's day: the first Slurm job (by key) of the next job day
STALE_JOB = ("select job_key, x_job_day from intermediate.int_gpu_jobs_attributed where scheduler = 'slurm' "
             "and x_job_day > date '{day}' order by x_job_day, job_key limit 1")
# stg_usage__gpu_jobs' key of a raw Slurm row
RAW_JOB_KEY = "scheduler || ':' || coalesce(cluster, '(default)') || ':' || job_id"
FIRST_API_DAY = "(select min(x_request_day) from intermediate.int_api_requests_allocated)"
# the request with a stale export two days later: the first request (by id) of the second request day
STALE_REQUEST = ("select request_id from intermediate.int_api_requests_allocated "
                 f"where x_request_day = {FIRST_API_DAY} + 1 order by request_id limit 1")
# a request of the last request day, copied as the night's new request (without an id)
LAST_DAY_REQUEST = ("select min(request_id) from intermediate.int_api_requests_allocated "
                    "where x_request_day = (select max(x_request_day) from intermediate.int_api_requests_allocated)")
# an export a day older than the raw row that won (no row of a file loaded since the last build)
STALE = "_loaded_at - interval 1 day as _loaded_at"


def _restate(ledger: Path) -> list[str]:
    """The input changes (SQL) on `ledger`: the restated job's and the moved requests' new files, and the stale
    earlier exports of a job and a request on a day the night rebuilds."""
    con = duckdb.connect(str(ledger), read_only=True)
    try:
        job_key, day = con.execute(JOB).fetchone()
        stale_job, _ = con.execute(STALE_JOB.format(day=day)).fetchone()
        (stale_request,) = con.execute(STALE_REQUEST).fetchone()
        (copied_request,) = con.execute(LAST_DAY_REQUEST).fetchone()
    finally:
        con.close()
    file_load = ("insert into audit.file_loads select * replace ('{h}' as file_hash, now() as loaded_at) "
                 "from audit.file_loads where family = '{f}' limit 1")
    latest = "qualify row_number() over (order by _loaded_at desc, _source_line desc) = 1"
    return [
        f"insert into raw.gpu_jobs select * replace ('restated-jobs' as _file_hash, now() as _loaded_at, "
        f"gpu_count + 1 as gpu_count) from raw.gpu_jobs where {RAW_JOB_KEY} = '{job_key}' {latest}",
        f"insert into raw.gpu_jobs select * replace ({STALE}, timestamp '{day} 12:00:00' as started_at, "
        f"timestamp '{day} 12:00:00' as submitted_at) from raw.gpu_jobs where {RAW_JOB_KEY} = '{stale_job}' {latest}",
        file_load.format(h="restated-jobs", f="usage"),
        f"insert into raw.api_requests select * replace ('moved-requests' as _file_hash, now() as _loaded_at, "
        f"started_at - interval 1 day as started_at, ended_at - interval 1 day as ended_at) from raw.api_requests "
        f"where cast(started_at as date) = {FIRST_API_DAY}",
        f"insert into raw.api_requests select * replace ('moved-requests' as _file_hash, now() as _loaded_at, "
        f"cast(null as varchar) as request_id) from raw.api_requests where request_id = '{copied_request}'",
        f"insert into raw.api_requests select * replace ({STALE}, started_at + interval 1 day as started_at, "
        f"ended_at + interval 1 day as ended_at) from raw.api_requests where request_id = '{stale_request}'",
        file_load.format(h="moved-requests", f="api_spend"),
    ]


def _run(ledger: Path, *extra: str) -> None:
    """Run the two models (alone, one dbt command) on `ledger`; asserts each succeeded."""
    run_models(ledger, list(MODELS), *extra)


def _read(ledger: Path) -> dict:
    con = duckdb.connect(str(ledger), read_only=True)
    try:
        out: dict = {"job": con.execute(JOB).fetchone()}
        for model, day in MODELS.items():
            out[model] = {str(d): (n, stamp) for d, n, stamp in con.execute(
                f"select {day}, count(*), max(x_built_at) from intermediate.{model} group by all").fetchall()}
            out[model + ":rows"] = con.execute(
                f"select * exclude (x_built_at, x_loaded_at) from intermediate.{model} order by all").fetchall()
        out["gpu_counts"] = dict(con.execute(
            "select job_key, list(gpu_count) from intermediate.int_gpu_jobs_attributed group by job_key").fetchall())
        return out
    finally:
        con.close()


def _window_rows(ledger: Path, model: str, key: str) -> list[int]:
    """Rows entering each window partitioned by `key` when the model's compiled night SQL runs on `ledger`."""
    (compiled,) = (ledger.parent / "target" / "compiled").rglob(f"{model}.sql")
    profile = ledger.parent / f"{model}.profile.json"
    con = duckdb.connect(str(ledger), read_only=True)
    try:
        con.execute("set threads = 1")
        con.execute("set enable_profiling = 'json'")
        con.execute(f"set profiling_output = '{profile}'")
        con.execute(compiled.read_text()).fetchall()
    finally:
        con.close()
    found: list[int] = []

    def walk(node: dict) -> None:
        if "WINDOW" in str(node.get("operator_type")) and f"PARTITION BY {key} " in json.dumps(node.get("extra_info")):
            found.extend(child["operator_cardinality"] for child in node["children"])
        for child in node.get("children", []):
            walk(child)

    walk(json.loads(profile.read_text()))
    return found


def _count(ledger: Path, sql: str) -> int:
    con = duckdb.connect(str(ledger), read_only=True)
    try:
        return con.execute(sql).fetchone()[0]
    finally:
        con.close()


@pytest.fixture(scope="module")
def steps(sample_run: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    assert sample_run["ok"], sample_run["reason"]
    home = Path(sample_run["home"])
    base = tmp_path_factory.mktemp("latest_rows")
    return {**nightly_and_full(home, base, _restate(home / "ledger.duckdb"), _run, _read), "base": base}


def test_a_restated_job_replaces_its_row_and_rebuilds_its_day_only(steps: dict) -> None:
    job_key, day = steps["before"]["job"]
    model = "int_gpu_jobs_attributed"
    before, after = steps["before"][model], steps["after"][model]
    # the sample's first Slurm day holds its one job; the next job day 8 (the stale export's job among them)
    next_day = min(d for d in before if d > str(day))
    assert (str(day), before[str(day)][0], next_day, before[next_day][0]) == ("2023-06-01", 1, "2023-06-02", 8)
    # the next day is not rebuilt: its 8 rows kept (the stale export's job's row not written on its own)
    assert rebuilt_periods(before, after) == [str(day)]
    assert after[str(day)][0] == 1
    (gpus_before,) = steps["before"]["gpu_counts"][job_key]
    # the restated export: one GPU more than the row it replaces, which is gone
    assert steps["after"]["gpu_counts"][job_key] == [gpus_before + 1]


def test_requests_moved_a_day_earlier_rebuild_their_new_day_and_leave_the_old(steps: dict) -> None:
    model = "int_api_requests_allocated"
    before, after = steps["before"][model], steps["after"][model]
    assert {d: n for d, (n, _) in before.items()} == {"2025-04-14": 101, "2025-04-15": 93, "2025-04-16": 106}
    # 2025-04-14's 101 requests on 2025-04-13; 2025-04-16's 106 and the new one; 2025-04-15 untouched (its
    # request with a stale export dated 2025-04-16 stays there, its latest)
    assert "2025-04-14" not in after
    assert rebuilt_periods({d: v for d, v in before.items() if d != "2025-04-14"}, after) == ["2025-04-13", "2025-04-16"]
    assert {d: n for d, (n, _) in after.items()} == {"2025-04-13": 101, "2025-04-15": 93, "2025-04-16": 107}


@pytest.mark.parametrize("model", list(MODELS))
def test_the_rows_equal_a_full_rebuild(steps: dict, model: str) -> None:
    assert steps["after"][model + ":rows"] == steps["full"][model + ":rows"]
    assert steps["after"][model + ":rows"] != steps["before"][model + ":rows"]


def test_the_night_windows_the_raw_rows_of_its_keys_only(steps: dict) -> None:
    ledger = steps["base"] / "nightly" / "ledger.duckdb"
    # the raw rows of the jobs with a raw row on the rebuilt day 2023-06-01: the restated job's two (its first
    # export and the restatement) and the stale export's job's two (the stale export and the one that won)
    assert _window_rows(ledger, "int_gpu_jobs_attributed", "job_key") == [4]
    # of the 100 + 2 raw rows of Slurm jobs (the view's window reads all of them)
    assert _count(ledger, "select count(*) from raw.gpu_jobs where scheduler = 'slurm'") == 102
    # the raw rows of the requests with a raw row on 2025-04-13, 2025-04-14 or 2025-04-16: the 101 moved, two
    # each (2 x 101 = 202); 2025-04-16's 106, one each; the new request's one; the stale export's request's two
    # (202 + 106 + 1 + 2 = 311; the keyless row is read as the view reads it) of the 300 + 101 + 1 + 1 = 403 raw request rows
    assert _window_rows(ledger, "int_api_requests_allocated", "request_id") == [311]
    assert _count(ledger, "select count(*) from raw.api_requests") == 403


def test_the_request_without_an_id_fails_the_models_column_check(steps: dict) -> None:
    ledger = steps["base"] / "nightly" / "ledger.duckdb"
    check = "column_constraints_int_api_requests_allocated_"
    status, names, rows = run_checks(ledger, (check,), target=ledger.parent / "check-target")[check]
    failing = {(r[names.index("constraint_type")], r[names.index("column_name")], r[names.index("failing_rows")])
               for r in rows}
    # the one row of the night's new request, on 2025-04-16 (rebuilt after the check last passed)
    assert (status, failing) == ("fail", {("not_null", "request_id", 1)})
