"""The usage chain is incremental by UTC day (int_gpu_usage_hourly, int_gpu_usage_unbilled:
macros/incremental_days.sql), and exact: after each nightly refresh below, the publication and the
models' rows equal a full refresh of the same inputs into a fresh home, and each model rewrote only
the days its changed inputs touch. So is the
FOCUS export (int_focus_export_rows, by day of ChargePeriodStart): it rewrites the days whose splits
changed, here the days of the GPU lines whose idle share moved and day 1, the day of the month's
untagged credit, which is spread by each team's chargeback (idle cost included).

One home, five refreshes of a small generated fleet (8 GPUs, 2025-04-01..03) plus hand-written files:
1. days 1-2 (day 3's per-day files held back), a lab host `gpu-lab-01` whose only telemetry is on
   day 1 (no job ever ran on it: its pool is `telemetry:gpu-lab-01`), and a lab bill of its own
   account: two GPU lines of a reservation that is no host, day 1 05:00-06:00 and day 2 22:00-23:00;
2. day 3's files and a late accounting file with a job on a host of its own (`gpu-lab-02`, so it
   adds no GPU-hour to a full host) from day 2 22:00 to day 3 02:00 (spans midnight): days 2 and 3
   are rebuilt, day 1 is not;
3. a restated accounting file for day 1 (one day-1 job ends an hour earlier): day 1 only;
4. a job of cluster `lab-b` on gpu-lab-01 on day 3: the host's pool over all history becomes
   `slurm:lab-b`, which moves its day-1 telemetry: day 3 (the job) and day 1 (the host's telemetry)
   are rebuilt, day 2 is not;
5. the lab bill re-delivered without its day-2 line, and a day-3 media batch restated to end 30
   minutes earlier: int_gpu_usage_hourly rebuilds day 1 (the delivery's remaining line) and day 2 (its
   bill hours changed), and
   int_gpu_usage_unbilled days 1, 2 (where the line gone ran) and 3 (the batch); the day-1 API log
   restated in place (one request's spend changed): int_api_requests_allocated (by UTC day of the
   request) rebuilds day 1 only, as it rebuilt day 3 only for day 3's log.
fct_focus_export copies the days int_focus_export_rows rebuilt; the publication equals the full refresh's.
tests/pipeline/test_next_day.py reads refreshes 1-2 as the plain next day (the dbt nodes each ran).
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from pipelines.cli import execute_refresh
from tests import prefetch
from tests.conftest import published_tables
from tests.pipeline.test_incremental import assert_same_rows, assert_same_tables
from tools.generate import generate

pytestmark = pytest.mark.e2e

DAY1, DAY2, DAY3 = "2025-04-01", "2025-04-02", "2025-04-03"
HELD = (f"api_spend/litellm_spend_logs_{DAY3}.csv", f"usage/dcgm_{DAY3}.csv", f"usage/sacct_{DAY3}.txt")
DAILY = re.compile(rf"^(dcgm|sacct|litellm_spend_logs)_{DAY3}\.(csv|txt)$")  # a generated fleet's files of one day
SACCT_HEADER = ("JobID|JobName|User|Account|Partition|NodeList|NNodes|NCPUs|State|Submit|Start|End|Elapsed|"
                "Timelimit|AllocTRES|TRESUsageInMax|ExitCode|Comment")
TRES = "billing=4,cpu=4,gres/gpu:l40s=1,gres/gpu=1,mem=10G,node=1"


def _sacct_job(job_id: str, node: str, start: str, end: str, elapsed: str, cluster: str | None = None) -> str:
    fields = [job_id, "late-job", "u1", "platform", "l40s", node, "1", "4", "COMPLETED", start, start, end,
              elapsed, "05:00:00", TRES, "", "0:0", ""]
    return "|".join(fields + ([cluster] if cluster else []))


def _lab_telemetry(dcgm_day1: Path) -> str:
    """Three DCGM samples of one GPU on gpu-lab-01, day 1 10:00-10:02, 50 % busy, no labels."""
    header = dcgm_day1.read_text().splitlines()[0]
    cols = header.split(",")
    rows = [header]
    for minute in range(3):
        values = dict.fromkeys(cols, "")
        values.update({"timestamp": f"{DAY1}T10:0{minute}:00Z", "hostname": "gpu-lab-01", "gpu": "0",
                       "uuid": "GPU-lab-0001", "modelName": "NVIDIA L40S", "DCGM_FI_DEV_GPU_UTIL": "50",
                       "DCGM_FI_PROF_GR_ENGINE_ACTIVE": "0.5", "DCGM_FI_DEV_FB_USED": "1000",
                       "DCGM_FI_DEV_FB_FREE": "40000"})
        rows.append(",".join(values[c] for c in cols))
    return "\n".join(rows) + "\n"


def _restated_day1_job(sacct_day1: Path) -> str:
    """The first day-1 job that starts and ends on day 1 before 20:00, with its steps, ending an hour
    earlier (End and Elapsed moved back by one hour)."""
    lines = sacct_day1.read_text().splitlines()
    header, rows = lines[0], [line.split("|") for line in lines[1:]]
    cols = header.split("|")
    start, end, elapsed = cols.index("Start"), cols.index("End"), cols.index("Elapsed")
    job = next(r for r in rows if "." not in r[0] and r[start].startswith(DAY1) and r[end].startswith(DAY1)
               and "02:00:00" <= r[elapsed] and r[end][11:13] < "20")
    old_end, old_elapsed = job[end], job[elapsed]
    new_end = f"{old_end[:11]}{int(old_end[11:13]) - 1:02d}{old_end[13:]}"
    new_elapsed = f"{int(old_elapsed[:2]) - 1:02d}{old_elapsed[2:]}"
    out = [header]
    for r in rows:
        if r[0] == job[0] or r[0].startswith(job[0] + "."):
            r = [new_end if v == old_end else new_elapsed if v == old_elapsed else v for v in r]
            out.append("|".join(r))
    return "\n".join(out) + "\n"


def _lab_bill(aws_bill: Path, day2_line: bool = True) -> str:
    """A FOCUS file of a lab billing account (its own delivery): GPU lines of reservation
    `lab-reservation-1` (no host), tagged to search-embed, day 1 05:00-06:00 and (`day2_line`) day 2
    22:00-23:00; each a copy of the generated AWS bill's first GPU line with those fields changed."""
    with aws_bill.open(newline="") as f:
        reader = csv.DictReader(f)
        template = next(r for r in reader if r["ChargeCategory"] == "Usage" and r["x_InstanceType"])
        columns = reader.fieldnames or []
    periods = [(f"{DAY1}T05:00:00Z", f"{DAY1}T06:00:00Z")]
    if day2_line:
        periods.append((f"{DAY2}T22:00:00Z", f"{DAY2}T23:00:00Z"))
    out = io.StringIO()
    writer = csv.DictWriter(out, columns, lineterminator="\n")
    writer.writeheader()
    for start, end in periods:
        writer.writerow({**template, "ChargePeriodStart": start, "ChargePeriodEnd": end,
                         "BillingAccountId": "999000999000", "BillingAccountName": "GPU Ledger Lab",
                         "SubAccountId": "999000999001", "SubAccountName": "lab", "InvoiceId": "INV-LAB-2025-04",
                         "ResourceId": "lab-reservation-1", "ResourceName": "",
                         "Tags": json.dumps({"team": "platform", "workload": "search-embed"})})
    return out.getvalue()


RESTATED_SPEND = "0.5"


def _restated_api_log(log: Path) -> tuple[str, str, str]:
    """The API log with its first request's spend set to RESTATED_SPEND: (the file's text, that request's
    id and the second request's, unchanged)."""
    with log.open(newline="") as f:
        reader = csv.DictReader(f)
        rows, columns = list(reader), reader.fieldnames or []
    changed, kept = rows[0], rows[1]
    changed["spend"] = RESTATED_SPEND
    out = io.StringIO()
    writer = csv.DictWriter(out, columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue(), changed["request_id"], kept["request_id"]


def _restated_day3_batch(batches: Path) -> str:
    """The media batches with the first that starts and ends on day 3 before 23:00 ending 30 minutes
    earlier (and its GPU-hours with it)."""
    with batches.open(newline="") as f:
        reader = csv.DictReader(f)
        rows, columns = list(reader), reader.fieldnames or []
    batch = next(r for r in rows if r["started_at"].startswith(DAY3) and r["ended_at"].startswith(DAY3)
                 and r["ended_at"][11:13] < "23" and r["ended_at"][14:16] >= "30")
    batch["ended_at"] = f"{batch['ended_at'][:14]}{int(batch['ended_at'][14:16]) - 30:02d}{batch['ended_at'][16:]}"
    # its GPU-hours follow (GPUs x hours), else the batch is quarantined as implausible
    minutes = (datetime.fromisoformat(batch["ended_at"]) - datetime.fromisoformat(batch["started_at"])).seconds / 60
    batch["gpu_hours"] = f"{int(batch['gpu_count']) * minutes / 60:.2f}"
    out = io.StringIO()
    writer = csv.DictWriter(out, columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _stamps(home: Path, table: str = "int_gpu_usage_hourly", day: str = "usage_date") -> dict[str, tuple]:
    """Per day: rows, oldest and newest x_loaded_at of an incremental model (default int_gpu_usage_hourly)."""
    con = duckdb.connect(str(home / "ledger.duckdb"), read_only=True)
    try:
        return {str(d): (n, lo, hi) for d, n, lo, hi in con.execute(
            f"select {day}, count(*), min(x_loaded_at), max(x_loaded_at) "
            f"from intermediate.{table} group by {day} order by {day}").fetchall()}
    finally:
        con.close()


def _export_stamps(home: Path) -> dict[str, tuple]:
    return _stamps(home, "int_focus_export_rows", "x_charge_day")


def _api_stamps(home: Path) -> dict[str, tuple]:
    return _stamps(home, "int_api_requests_allocated", "x_request_day")


def _api_rows(home: Path) -> list[tuple]:
    con = duckdb.connect(str(home / "ledger.duckdb"), read_only=True)
    try:
        return con.execute("select * exclude (x_loaded_at, x_built_at) from intermediate.int_api_requests_allocated "
                           "order by all").fetchall()
    finally:
        con.close()


def _api_spends(home: Path, request_ids: list[str]) -> dict[str, Decimal]:
    con = duckdb.connect(str(home / "ledger.duckdb"), read_only=True)
    try:
        return dict(con.execute("select request_id, spend from intermediate.int_api_requests_allocated "
                                "where request_id in (select unnest(?))", [request_ids]).fetchall())
    finally:
        con.close()


def _unbilled_stamps(home: Path) -> dict[str, tuple]:
    return _stamps(home, "int_gpu_usage_unbilled", "day")


def _unbilled_rows(home: Path) -> list[tuple]:
    con = duckdb.connect(str(home / "ledger.duckdb"), read_only=True)
    try:
        return con.execute("select * exclude (x_loaded_at, x_built_at) from intermediate.int_gpu_usage_unbilled "
                           "order by all").fetchall()
    finally:
        con.close()


def _usage_rows(home: Path) -> list[tuple]:
    con = duckdb.connect(str(home / "ledger.duckdb"), read_only=True)
    try:
        return con.execute("select * exclude (x_loaded_at, x_built_at) from intermediate.int_gpu_usage_hourly "
                           "order by all").fetchall()
    finally:
        con.close()


# The GPU-work chain and the splits by day or billing period: (model, its day column).
WORK_MODELS = {"int_gpu_jobs_attributed": "x_job_day", "int_gpu_work_events": "x_event_day",
               "int_gpu_work_priced": "x_event_day", "int_focus_allocation_splits": "x_billing_period"}


def _model_rows(home: Path, table: str) -> list[tuple]:
    con = duckdb.connect(str(home / "ledger.duckdb"), read_only=True)
    try:
        return con.execute(f"select * exclude (x_loaded_at, x_built_at) from intermediate.{table} "
                           "order by all").fetchall()
    finally:
        con.close()


def _lab_pools(home: Path) -> list[tuple]:
    con = duckdb.connect(str(home / "ledger.duckdb"), read_only=True)
    try:
        return con.execute("select distinct usage_date::varchar, pool_id from intermediate.int_gpu_usage_hourly "
                           "where host = 'gpu-lab-01' and allocation_basis = 'telemetry' order by all").fetchall()
    finally:
        con.close()


def _dbt_nodes(home: Path) -> set[str]:
    """The dbt nodes the home's last refresh ran."""
    return {r["unique_id"] for r in json.loads((home / "dbt-target" / "run_results.json").read_text())["results"]}


def _refresh(home: Path, inputs: Path) -> None:
    ok, _, reason = execute_refresh(home, inputs, docs=False)
    assert ok, reason


def build_usage_chain(base: Path) -> dict:
    """The four refreshes of the module doc into one home, each followed by a full refresh of the same
    inputs into a fresh home (a tests/prefetch.py job)."""
    fleet, inputs, home = base / "fleet", base / "inputs", base / "nightly"
    generate(fleet, gpus=8, days=3, teams=2, seed=2)
    shutil.copytree(fleet, inputs)
    for rel in HELD:
        (inputs / rel).unlink()
    (inputs / "usage" / "dcgm_lab_2025-04-01.csv").write_text(_lab_telemetry(fleet / "usage" / f"dcgm_{DAY1}.csv"))
    lab_bill = inputs / "billing" / "focus_lab_2025-04.csv"
    lab_bill.write_text(_lab_bill(fleet / "billing" / "focus_aws_2025-04.csv"))
    steps: dict[str, dict] = {}

    def step(name: str) -> None:
        _refresh(home, inputs)
        full = base / f"full-{name}"
        shutil.copytree(inputs, base / f"inputs-{name}")
        _refresh(full, base / f"inputs-{name}")
        steps[name] = {"stamps": _stamps(home), "rows": _usage_rows(home), "full_rows": _usage_rows(full),
                       "export_stamps": _export_stamps(home), "unbilled_stamps": _unbilled_stamps(home),
                       "unbilled_rows": _unbilled_rows(home), "full_unbilled_rows": _unbilled_rows(full),
                       "api_stamps": _api_stamps(home), "api_rows": _api_rows(home),
                       "full_api_rows": _api_rows(full),
                       "published": published_tables(home / "serving.duckdb"), "nodes": _dbt_nodes(home),
                       "full_published": published_tables(full / "serving.duckdb"), "lab_pools": _lab_pools(home)}
        for model, day in WORK_MODELS.items():
            steps[name][model] = _stamps(home, model, day)
            steps[name][model + ":rows"] = _model_rows(home, model)
            steps[name][model + ":full_rows"] = _model_rows(full, model)

    _refresh(home, inputs)
    steps["first"] = {"stamps": _stamps(home), "lab_pools": _lab_pools(home), "export_stamps": _export_stamps(home),
                      "unbilled_stamps": _unbilled_stamps(home), "api_stamps": _api_stamps(home),
                      "nodes": _dbt_nodes(home),
                      **{model: _stamps(home, model, day) for model, day in WORK_MODELS.items()}}
    steps["held"] = sorted(str(p.relative_to(fleet)) for p in fleet.rglob("*") if DAILY.match(p.name))
    for rel in HELD:
        shutil.copy2(fleet / rel, inputs / rel)
    (inputs / "usage" / "sacct_late.txt").write_text(
        SACCT_HEADER + "\n" + _sacct_job("5100001", "gpu-lab-02", f"{DAY2}T22:00:00", f"{DAY3}T02:00:00",
                                         "04:00:00") + "\n")
    step("next_day")
    (inputs / "usage" / "sacct_2025-04-01_restated.txt").write_text(
        _restated_day1_job(fleet / "usage" / f"sacct_{DAY1}.txt"))
    step("restated")
    (inputs / "usage" / "sacct_lab_b.txt").write_text(
        SACCT_HEADER + "|Cluster\n" + _sacct_job("5100002", "gpu-lab-01", f"{DAY3}T09:00:00", f"{DAY3}T11:00:00",
                                                 "02:00:00", "lab-b") + "\n")
    step("pool_moved")
    # a re-delivery replaces the lab account's month in place; the batch file is restated in place too
    lab_bill.write_text(_lab_bill(fleet / "billing" / "focus_aws_2025-04.csv", day2_line=False))
    (inputs / "benchmarks" / "media_batches.csv").write_text(
        _restated_day3_batch(fleet / "benchmarks" / "media_batches.csv"))
    api_log, changed, kept = _restated_api_log(fleet / "api_spend" / f"litellm_spend_logs_{DAY1}.csv")
    spends_before = _api_spends(home, [changed, kept])
    (inputs / "api_spend" / f"litellm_spend_logs_{DAY1}.csv").write_text(api_log)
    step("restated_cover")
    steps["restated_cover"].update(api_requests=(changed, kept), api_spends_before=spends_before,
                                   api_spends=_api_spends(home, [changed, kept]))
    return steps


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("usage_chain", tmp_path_factory)


def _rebuilt(before: dict, after: dict) -> list[str]:
    """Days whose rows all carry a newer stamp than any row had before (rewritten by this refresh);
    a day not rebuilt keeps every stamp it had."""
    newest = max(hi for _, _, hi in before.values())
    rebuilt = [d for d, (_, lo, _) in after.items() if lo > newest]
    for d, (n, lo, hi) in after.items():
        if d not in rebuilt:
            assert (n, lo, hi) == before[d], (d, before.get(d), (n, lo, hi))
    return rebuilt


def _assert_same(step: dict, load_history: bool = True) -> None:
    """Publication and models equal a full refresh; `load_history` False leaves out source_files, the
    list of landed file versions, when files were replaced in place (the nightly home landed both)."""
    keep = (lambda t: True) if load_history else (lambda t: t != "source_files")
    assert_same_tables({t: r for t, r in step["published"].items() if keep(t)},
                       {t: r for t, r in step["full_published"].items() if keep(t)})
    assert_same_rows(step["rows"], step["full_rows"], "int_gpu_usage_hourly (incremental against full)")
    assert_same_rows(step["unbilled_rows"], step["full_unbilled_rows"],
                     "int_gpu_usage_unbilled (incremental against full)")
    assert_same_rows(step["api_rows"], step["full_api_rows"], "int_api_requests_allocated (incremental against full)")
    for model in WORK_MODELS:
        assert_same_rows(step[model + ":rows"], step[model + ":full_rows"], f"{model} (incremental against full)")


def test_first_refresh_holds_days_one_and_two_and_the_lab_host_in_its_own_pool(chain: dict) -> None:
    # day 3 appears only through day-2 jobs that run past midnight; the lab host has no job
    assert {DAY1, DAY2} <= set(chain["first"]["stamps"])
    assert chain["first"]["lab_pools"] == [(DAY1, "telemetry:gpu-lab-01")]


def test_a_job_spanning_midnight_rebuilds_its_two_days_and_not_the_first(chain: dict) -> None:
    after = chain["next_day"]["stamps"]
    # days after day 3 are new: day-3 jobs running past midnight
    assert _rebuilt(chain["first"]["stamps"], after) == [DAY2, DAY3] + [d for d in sorted(after) if d > DAY3]
    # the unbilled split follows the days the usage chain rebuilt (no bill line or run changed)
    unbilled = chain["next_day"]["unbilled_stamps"]
    assert _rebuilt(chain["first"]["unbilled_stamps"], unbilled) == [DAY2, DAY3] + [d for d in sorted(unbilled)
                                                                                    if d > DAY3]
    _assert_same(chain["next_day"])


def test_a_restated_earlier_day_rebuilds_that_day_only(chain: dict) -> None:
    assert _rebuilt(chain["next_day"]["stamps"], chain["restated"]["stamps"]) == [DAY1]
    assert _rebuilt(chain["next_day"]["unbilled_stamps"], chain["restated"]["unbilled_stamps"]) == [DAY1]
    _assert_same(chain["restated"])


def test_the_export_rebuilds_the_days_whose_splits_moved(chain: dict) -> None:
    # first refresh: day 3's bill lines are there, its usage is not (no idle portion yet)
    assert sorted(chain["first"]["export_stamps"]) == [DAY1, DAY2, DAY3]
    # day 3's usage and the late job (days 2-3) move those days' idle shares; the month's chargeback moves
    # with them, and the untagged credit on day 1 is spread by it
    assert _rebuilt(chain["first"]["export_stamps"], chain["next_day"]["export_stamps"]) == [DAY1, DAY2, DAY3]
    # the restated day-1 job: day 1 only (its idle shares, and the credit), days 2 and 3 keep their rows
    assert _rebuilt(chain["next_day"]["export_stamps"], chain["restated"]["export_stamps"]) == [DAY1]
    # the lab host is on no bill line: no line's idle share and no weight the credit is spread by moves
    assert _rebuilt(chain["restated"]["export_stamps"], chain["pool_moved"]["export_stamps"]) == []


def test_a_host_whose_pool_moves_over_history_rebuilds_its_earlier_days(chain: dict) -> None:
    step = chain["pool_moved"]
    # the lab job is on day 3, yet the host's day-1 telemetry moves to the job's pool (most job-hours
    # on the host over all history): day 1 is rebuilt for it, day 2 (nothing of the host) is not
    assert step["lab_pools"] == [(DAY1, "slurm:lab-b")]
    assert _rebuilt(chain["restated"]["stamps"], step["stamps"]) == [DAY1, DAY3]
    assert _rebuilt(chain["restated"]["unbilled_stamps"], step["unbilled_stamps"]) == [DAY1, DAY3]
    _assert_same(step)


def test_a_restated_bill_line_or_run_rebuilds_the_days_it_ran_on(chain: dict) -> None:
    before, step = chain["pool_moved"], chain["restated_cover"]
    # the re-delivered lab bill keeps its day-1 line: the usage chain rebuilds the hours of its lines, and
    # day 2, whose GPU bill hours changed (the dropped line: macros/bill_charge_days.sql)
    assert _rebuilt(before["stamps"], step["stamps"]) == [DAY1, DAY2]
    # the split also rebuilds day 2, where the dropped line ran, and day 3, where the batch ran
    assert _rebuilt(before["unbilled_stamps"], step["unbilled_stamps"]) == [DAY1, DAY2, DAY3]
    _assert_same(step, load_history=False)


def test_api_requests_rebuild_the_days_of_new_or_restated_logs(chain: dict) -> None:
    assert sorted(chain["first"]["api_stamps"]) == [DAY1, DAY2]
    assert _rebuilt(chain["first"]["api_stamps"], chain["next_day"]["api_stamps"]) == [DAY3]
    # no API log changed: every day keeps its rows and stamps
    assert _rebuilt(chain["next_day"]["api_stamps"], chain["restated"]["api_stamps"]) == []
    step = chain["restated_cover"]
    # the day-1 log restated in place: day 1 only, the restated request with its new spend (0.5 USD, as
    # written), the next one as it was
    assert _rebuilt(chain["pool_moved"]["api_stamps"], step["api_stamps"]) == [DAY1]
    changed, kept = step["api_requests"]
    assert step["api_spends_before"][changed] != Decimal(RESTATED_SPEND)
    assert step["api_spends"][changed] == Decimal(RESTATED_SPEND)
    assert step["api_spends"][kept] == step["api_spends_before"][kept]


def _work_rebuilt(before: dict, after: dict) -> dict[str, list[str]]:
    return {model: _rebuilt(before[model], after[model]) for model in WORK_MODELS}


def test_the_gpu_work_chain_rebuilds_the_days_its_inputs_changed(chain: dict) -> None:
    # next day: day 3's accounting and the late job starting on day 2 (day 1's jobs are not touched)
    jobs = _rebuilt(chain["first"]["int_gpu_jobs_attributed"], chain["next_day"]["int_gpu_jobs_attributed"])
    assert {DAY2, DAY3} <= set(jobs) and DAY1 not in jobs
    for before, name in (("next_day", "restated"), ("restated", "pool_moved"), ("pool_moved", "restated_cover")):
        rebuilt = _work_rebuilt(chain[before], chain[name])
        unbilled = _rebuilt(chain[before]["unbilled_stamps"], chain[name]["unbilled_stamps"])
        # the work of a day follows the unbilled GPU-hours and run records of that day, its price the work
        events = chain[name]["int_gpu_work_events"]
        assert rebuilt["int_gpu_work_events"] == [d for d in unbilled if d in events], name
        assert rebuilt["int_gpu_work_priced"] == rebuilt["int_gpu_work_events"], name
        # the one billing period (April 2025) is rebuilt when its usage moved, never another
        assert rebuilt["int_focus_allocation_splits"] in ([], ["2025-04-01"]), name
    # the restated day-1 job: day 1 only; the lab-b job on day 3: day 3 only; no accounting file: none
    assert _work_rebuilt(chain["next_day"], chain["restated"])["int_gpu_jobs_attributed"] == [DAY1]
    assert _work_rebuilt(chain["restated"], chain["pool_moved"])["int_gpu_jobs_attributed"] == [DAY3]
    assert _work_rebuilt(chain["pool_moved"], chain["restated_cover"])["int_gpu_jobs_attributed"] == []
