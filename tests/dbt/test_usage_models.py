"""GPU usage models on the real Hábrók sacct/scontrol files and DCGM/nvidia-smi captures.

Figures read by hand from samples/inputs/usage/hb_jobinfo_sacct_snowman_delim.txt (times taken as UTC,
docs/sources/usage.md):
- job 8150389: AllocTRES gres/gpu:a100=2, Elapsed 2-21:09:16 = 248,956 s -> 2 x 248956 / 3600
  = 138.3089 GPU-hours, Start 2024-04-13T20:33:32, End 2024-04-16T17:42:48, CANCELLED, gpuutil 100;
- job 7939708: 1 a100, FAILED after 4 s -> 1 x 4 / 3600 = 0.00111 GPU-hours;
- job 7965768: 1 v100, CANCELLED, Elapsed 15:28:22 = 55,702 s -> 15.4728 GPU-hours;
- scontrol: 6 a100 nodes x 4 GPUs = 24, 34 v100 nodes x 1 GPU = 34.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples" / "inputs"


@pytest.fixture(scope="module")
def usage_db(sample_run: dict):
    """The session's one refresh of every bundled sample (tests/conftest.py)."""
    con = duckdb.connect(str(sample_run["home"] / "ledger.duckdb"), read_only=True)
    yield {"ok": sample_run["ok"], "reason": sample_run["reason"], "con": con}
    con.close()


def _one(con, sql: str, *params):
    return con.execute(sql, list(params)).fetchone()


def test_refresh_publishes(usage_db):
    assert usage_db["ok"], usage_db["reason"]


def test_job_8150389_gpu_hours_spread_over_its_hours(usage_db):
    con = usage_db["con"]
    expected = 2 * (2 * 86400 + 21 * 3600 + 9 * 60 + 16) / 3600  # 138.3089
    gpu_count, gpu_model, hours = _one(
        con, "select gpu_count, gpu_model, allocated_gpu_hours from intermediate.int_gpu_jobs_attributed "
             "where job_id = '8150389'")
    assert (gpu_count, gpu_model) == (2, "A100-80GB")
    assert hours == pytest.approx(expected, abs=1e-9)
    buckets, total, first, last, first_h, last_h = _one(
        con, "select count(*), sum(allocated_gpu_hours), min(hour_start), max(hour_start), "
             "arg_min(allocated_gpu_hours, hour_start), arg_max(allocated_gpu_hours, hour_start) "
             "from intermediate.int_gpu_usage_hourly where job_id = '8150389'")
    # hours are DECIMAL(38, 9) per hour bucket (reruns publish the same digits): 70 buckets
    # rounded at 1e-9 each stay within 1e-7 of the exact total
    assert float(total) == pytest.approx(expected, abs=1e-7)
    # 20:33:32 on the 13th to 17:42:48 on the 16th touches 70 hour buckets (20h .. 17h, 3 days later)
    assert buckets == 70
    assert str(first) == "2024-04-13 20:00:00" and str(last) == "2024-04-16 17:00:00"
    assert float(first_h) == pytest.approx(2 * (60 - 33 - 32 / 60) / 60, abs=1e-9)  # 2 GPUs x 26m28s
    assert float(last_h) == pytest.approx(2 * (42 + 48 / 60) / 60, abs=1e-9)  # 2 GPUs x 42m48s
    used, = _one(con, "select sum(used_gpu_hours) from intermediate.int_gpu_usage_hourly where job_id = '8150389'")
    assert float(used) == pytest.approx(expected, abs=1e-7)  # sacct gres/gpuutil=100


def test_failed_and_cancelled_jobs_in_failed_jobs_mart(usage_db):
    con = usage_db["con"]
    rows = {r[0]: r[1:] for r in con.execute(
        "select job_id, failure_state, is_failure, failed_gpu_hours from marts.fct_gpu_failed_jobs").fetchall()}
    assert rows["7939708"][0:2] == ("FAILED", True)
    assert rows["7939708"][2] == pytest.approx(4 / 3600, abs=1e-12)
    assert rows["8150389"][0:2] == ("CANCELLED", False)
    assert rows["7965768"][2] == pytest.approx(55702 / 3600, abs=1e-9)
    # FAILED on an a100 node without gres (older accounting): visible, with no GPU-hours
    assert rows["5896251"] == ("FAILED", True, 0.0)
    # CPU-only failures (TIMEOUT on omni/node partitions) are not GPU waste
    assert "8180204" not in rows


def test_unowned_jobs_are_unallocated_and_never_dropped(usage_db):
    con = usage_db["con"]
    nulls, unallocated = _one(
        con, "select count(*) filter (where team_id is null), count(*) filter (where team_id = '(unallocated)') "
             "from marts.fct_gpu_utilisation_daily")
    assert nulls == 0 and unallocated > 0
    alloc_mart, = _one(con, "select sum(allocated_gpu_hours) from marts.fct_gpu_utilisation_daily")
    alloc_hourly, = _one(con, "select sum(allocated_gpu_hours) from intermediate.int_gpu_usage_hourly")
    assert float(alloc_mart) == pytest.approx(float(alloc_hourly), abs=1e-9)


def test_inventory_capacity_and_idle_not_negative(usage_db):
    con = usage_db["con"]
    rows = dict(con.execute(
        "select gpu_model, max(billed_gpu_hours) from intermediate.int_gpu_idle_hourly "
        "where pool_id = 'slurm:(default)' group by gpu_model").fetchall())
    assert rows == {"A100-80GB": 24.0, "V100-32GB": 34.0}
    negatives, = _one(
        con, "select count(*) from marts.fct_gpu_idle_daily where idle_gpu_hours < 0 "
             "or unallocated_idle_gpu_hours < 0 or allocated_idle_gpu_hours < 0")
    assert negatives == 0
    bad_pct, = _one(con, "select count(*) from marts.fct_gpu_utilisation_daily "
                         "where utilisation_pct < 0 or utilisation_pct > 100")
    assert bad_pct == 0
