"""Every parser that writes raw.gpu_samples keeps one row per (time, GPU series, pod) within a file,
including rows without a time.

`stg_usage__gpu_samples` has no `qualify row_number()` dedupe of its own any more: it relied on the
parsers dropping in-file duplicates and on a file's rows being replaced as a unit
(`warehouse.raw.replace_file*`). The window partitioned by (file, sampled_at, host, gpu_index,
gpu_uuid, mig_instance_id, namespace, pod, container), and NULL sampled_at values group together
in a window partition; the parsers' key (sources/usage/_series.py: host, gpu_uuid, gpu_index,
mig_instance_id, time, pod) is coarser, so it implies the view's. Before this change the parsers
skipped rows without a time, so two identical nvidia-smi lines of a capture without a `timestamp`
column both reached the ledger (the view then kept one). These tests write such duplicates by hand.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pytest

from sources.catalog import recognise
from sources.usage import dcgm_csv, dcgm_prom, nvidia_smi
from sources.usage._series import series_findings

# The staging view's former partition (file = one parse here).
VIEW_KEY = "sampled_at, host, gpu_index, gpu_uuid, mig_instance_id, namespace, pod, container"


def _duplicates(table) -> int:
    """Rows beyond the first of each VIEW_KEY combination (NULLs group together, as in a window)."""
    con = duckdb.connect()
    con.register("t", table)
    n = con.execute(f"select coalesce(sum(n - 1), 0) from (select count(*) as n from t group by {VIEW_KEY})").fetchone()[0]
    con.close()
    return int(n)


def test_series_findings_drops_untimed_duplicates_only_within_series_and_pod() -> None:
    # rows: 0 (GPU a, no time, pod p), 1 (a, no time, p: duplicate of 0), 2 (a, no time, pod q),
    # 3 (b, no time, p), 4 (a, t=60 s, p: has a time, so not a duplicate of 0), 5 (a, 60 s, p: duplicate of 4)
    series = np.array([1, 1, 1, 2, 1, 1])
    pod = np.array([7, 7, 8, 7, 7, 7])
    ts = np.array([0, 0, 0, 0, 60_000_000, 60_000_000])
    valid = np.array([False, False, False, False, True, True])
    energy = np.full(6, np.nan)
    line = np.arange(2, 8)
    drop, warnings = series_findings(series, pod, ts, valid, energy, line)
    assert drop.tolist() == [False, True, False, False, False, True]
    assert any("2 duplicated sample row(s)" in w for w in warnings)


def test_series_findings_untimed_rows_ignore_the_placeholder_time() -> None:
    # A caller may leave anything in `ts` where `valid` is False: two untimed rows are the same
    # instant whatever that value is.
    drop, _ = series_findings(np.array([1, 1]), np.array([0, 0]), np.array([5, 9]), np.array([False, False]),
                              np.full(2, np.nan), np.array([2, 3]))
    assert drop.tolist() == [False, True]


def test_nvidia_smi_capture_without_timestamps_keeps_one_row_per_gpu(tmp_path: Path) -> None:
    f = tmp_path / "q.csv"
    f.write_text(
        "name, uuid, index, utilization.gpu [%], memory.used [MiB]\n"
        "NVIDIA H100 80GB HBM3, GPU-1, 0, 50 %, 100 MiB\n"
        "NVIDIA H100 80GB HBM3, GPU-2, 1, 20 %, 300 MiB\n"
        "NVIDIA H100 80GB HBM3, GPU-1, 0, 50 %, 100 MiB\n"   # the capture appended twice
        "NVIDIA H100 80GB HBM3, GPU-2, 1, 20 %, 300 MiB\n"
    )
    assert recognise(f, "usage").name == "nvidia_smi_query_gpu"
    out = nvidia_smi.parse_query_gpu(f)
    table = out.tables["gpu_samples"]
    rows = table.to_pylist()
    assert [(r["gpu_uuid"], r["_source_line"], r["sampled_at"]) for r in rows] == [("GPU-1", 2, None), ("GPU-2", 3, None)]
    assert _duplicates(table) == 0
    assert any("2 duplicated sample row(s)" in w for w in out.warnings)
    assert not out.rejects


def test_dcgm_scrape_without_timestamps_concatenated_twice(tmp_path: Path) -> None:
    scrape = ('DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",Hostname="h1",pod="p"} 40\n'
              'DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-b",Hostname="h1",pod="p"} 10\n')
    f = tmp_path / "twice.prom"
    f.write_text(scrape + scrape)
    table = dcgm_prom.parse(f).tables["gpu_samples"]
    assert [(r["gpu_uuid"], r["sampled_at"], r["gpu_util_pct"]) for r in table.to_pylist()] == [
        ("GPU-a", None, 40.0), ("GPU-b", None, 10.0)]
    assert _duplicates(table) == 0


def test_dcgm_csv_repeated_rows_leave_no_view_duplicates(tmp_path: Path) -> None:
    f = tmp_path / "d.csv"
    head = "timestamp,hostname,gpu,uuid,modelName,namespace,pod,container,DCGM_FI_DEV_GPU_UTIL\n"
    row = "2026-01-01T00:00:00Z,h1,0,GPU-a,NVIDIA H100,ns,p,c,{}\n"
    f.write_text(head + row.format(10) + row.format(10) + row.format(99) + row.replace(":00:00Z", ":01:00Z").format(5))
    table = dcgm_csv.parse(f).tables["gpu_samples"]
    assert [(r["_source_line"], r["gpu_util_pct"]) for r in table.to_pylist()] == [(2, 10.0), (5, 5.0)]
    assert _duplicates(table) == 0


@pytest.mark.parametrize("rel", [
    "dcgm/dcgm_exporter_readme_scrape_k8s.prom",  # no timestamps: sampled_at NULL
    "dcgm/dcgm_exporter_readme_scrape_docker.prom",
    "dcgm/datadog_dcgm_fixture_metrics.prom",
    "dcgm/datadog_dcgm_fixture_label_remap.prom",
    "nvidia_smi/nvidia_smi_query_gpu_h100-80gb-hbm3_load.csv",
    "nvidia_smi/nvidia_smi_query_gpu_h200-mig_load.csv",
    "nvidia_smi/nvidia_smi_query_gpu_l40s_load.csv",
    "nvidia_smi/nvidia_gpu_exporter_prometheus_h100_load.metrics",
])
def test_public_samples_have_one_row_per_view_key(public_data: Path, rel: str) -> None:
    path = public_data / "usage" / rel
    fmt = recognise(path, "usage")
    table = fmt.parse(path).tables["gpu_samples"]
    assert table.num_rows > 0
    assert _duplicates(table) == 0
