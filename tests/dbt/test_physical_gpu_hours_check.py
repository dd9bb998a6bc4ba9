"""A physical GPU never gives more GPU-hours than the hours it existed: `assert_physical_gpu_within_its_hours`
reads dim_physical_gpu's capacity_gpu_hours (what owned capacity is priced on), which the per-hour checks never
read, and fails a GPU credited with more than the hours from its first to its last hour.

On a copy of the sample ledger the check passes; then one GPU whose capacity fills its span exactly is given
one GPU-hour more (span + 1), as a source counted twice would: the check fails on exactly that GPU, and the
span it reports is the one worked out here from first_hour and last_hour (both hour starts: difference + 1).
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.dbt.ledger_nodes import change, copy_ledger, query, run_checks

CHECK = "assert_physical_gpu_within_its_hours"
DIM = "marts.dim_physical_gpu"


@pytest.fixture(scope="module")
def runs(sample_run: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    assert sample_run["ok"], sample_run["reason"]
    base = tmp_path_factory.mktemp("physical_gpu_hours")
    ledger = copy_ledger(sample_run["home"], base / "ledger")
    clean = run_checks(ledger, (CHECK,), target=base / "target")[CHECK]
    gpu, first, last, capacity = query(ledger, f"""
        select physical_gpu_id, first_hour, last_hour, capacity_gpu_hours from {DIM}
        where capacity_gpu_hours = epoch(last_hour - first_hour) / 3600 + 1 order by physical_gpu_id limit 1""")[0]
    span = Decimal(int((last - first).total_seconds()) // 3600 + 1)
    assert capacity == span  # the chosen GPU existed, by its capacity, every hour of its span
    change(ledger, [f"update {DIM} set capacity_gpu_hours = capacity_gpu_hours + 1 where physical_gpu_id = '{gpu}'"])
    doctored = run_checks(ledger, (CHECK,), target=base / "target")[CHECK]
    return {"clean": clean, "doctored": doctored, "gpu": gpu, "span": span}


def test_the_sample_inventory_passes(runs: dict) -> None:
    status, _, rows = runs["clean"]
    assert (status, rows) == ("pass", [])


def test_a_gpu_credited_one_hour_more_than_its_span_fails_alone(runs: dict) -> None:
    status, names, rows = runs["doctored"]
    assert status == "fail"
    found = [dict(zip(names, row, strict=True)) for row in rows]
    assert [(r["physical_gpu_id"], r["capacity_gpu_hours"], Decimal(str(r["hours_spanned"]))) for r in found] == [
        (runs["gpu"], runs["span"] + 1, runs["span"])]
