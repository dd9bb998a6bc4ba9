"""Usage family parsers on the real public samples, plus broken inputs written in tmp_path."""

from __future__ import annotations

import csv
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from sources.catalog import recognise
from sources.common import UnreadableFile
from sources.usage import (
    dcgm_csv,
    dcgm_prom,
    nvidia_exporter_prom,
    nvidia_smi,
    opencost,
    slurm_sacct,
    slurm_scontrol,
)
from tests.contract_helpers import load_in_memory


@pytest.fixture(scope="module")
def usage(public_data: Path) -> Path:
    return public_data / "usage"


def _rows(output, table):
    return output.tables[table].to_pylist()


# ---------------------------------------------------------------- recognition
@pytest.mark.parametrize(
    ("rel", "fmt"),
    [
        ("dcgm/dcgm_exporter_readme_scrape_k8s.prom", "dcgm_prometheus"),
        ("dcgm/datadog_dcgm_fixture_metrics.prom", "dcgm_prometheus"),
        ("dcgm/dcgm_exporter_default-counters.csv", None),  # metric catalog, not samples
        ("nvidia_smi/nvidia_smi_query_gpu_h200-mig_load.csv", "nvidia_smi_query_gpu"),
        ("nvidia_smi/nvidia_smi_query_compute_apps_l40s_idle.csv", "nvidia_smi_compute_apps"),
        ("nvidia_smi/nvidia_gpu_exporter_prometheus_h100_load.metrics", "nvidia_gpu_exporter_prometheus"),
        ("slurm/hb_jobinfo_sacct_snowman_delim.txt", "slurm_sacct"),
        ("slurm/hb_jobinfo_scontrol_nodes_tres.txt", "slurm_scontrol_nodes"),
        ("slurm/hb_jobinfo_sstat.txt", None),
        ("opencost_allocation_compute_response_example.json", "opencost_allocation"),
    ],
)
def test_recognise_by_content(usage: Path, rel: str, fmt: str | None) -> None:
    found = recognise(usage / rel, "usage")
    assert (found.name if found else None) == fmt


# ---------------------------------------------------------------- DCGM Prometheus
def test_dcgm_k8s_readme_sentinel_is_null(usage: Path) -> None:
    out = dcgm_prom.parse(usage / "dcgm/dcgm_exporter_readme_scrape_k8s.prom")
    (row,) = _rows(out, "gpu_samples")
    assert row["gpu_uuid"] == "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52"
    assert row["sm_clock_mhz"] == 139.0
    assert row["memory_temp_c"] is None  # 9223372036854775794 = DCGM NOT_SUPPORTED
    assert row["pod"] is None and row["namespace"] is None  # empty labels
    assert row["sampled_at"] is None
    assert any("sentinel" in w and "memory_temp_c=1" in w for w in out.warnings)
    con = load_in_memory(out, "usage")
    assert con.sql("select count(*), count(memory_temp_c) from raw.gpu_samples").fetchone() == (1, 0)


def test_dcgm_datadog_fixture_pivot(usage: Path) -> None:
    out = dcgm_prom.parse(usage / "dcgm/datadog_dcgm_fixture_metrics.prom")
    rows = {r["host"]: r for r in _rows(out, "gpu_samples")}
    assert set(rows) == {"424773df46e0", "551bdf382151", "ip-11111"}
    t4 = rows["424773df46e0"]
    assert t4["gpu_model"] == "Tesla T4"
    assert t4["power_w"] == pytest.approx(8.969)
    assert t4["energy_mj"] == 128996013.0
    assert t4["fb_used_mib"] == 0.0 and t4["fb_total_mib"] == 15109.0  # used + free, no FB_TOTAL
    assert rows["551bdf382151"]["fb_total_mib"] == 15109.0  # FB_TOTAL present
    a10 = rows["ip-11111"]
    assert (a10["namespace"], a10["pod"], a10["container"]) == ("ray-llm", "ray-1111111", "ray-worker")
    assert any("14 DCGM sample(s) without labels ignored" in w for w in out.warnings)
    load_in_memory(out, "usage")


def test_dcgm_label_remap_attribution(usage: Path) -> None:
    (row,) = _rows(dcgm_prom.parse(usage / "dcgm/datadog_dcgm_fixture_label_remap.prom"), "gpu_samples")
    assert (row["namespace"], row["pod"], row["container"], row["gpu_util_pct"]) == ("foo", "bar", "baz", 0.0)


SERIES = """# scrape_time 2026-01-01T00:00:00Z
DCGM_FI_DEV_GPU_UTIL{gpu="0", UUID="GPU-a",Hostname="h1",modelName="NVIDIA H100 80GB HBM3"} 50
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0", UUID="GPU-a",Hostname="h1"} 1000
# scrape_time 2026-01-01T00:01:00Z
DCGM_FI_DEV_GPU_UTIL{gpu="0", UUID="GPU-a",Hostname="h1"} 60
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0", UUID="GPU-a",Hostname="h1"} 500
# scrape_time 2026-01-01T00:01:00Z
DCGM_FI_DEV_GPU_UTIL{gpu="0", UUID="GPU-a",Hostname="h1"} 60
# scrape_time 2026-01-01T00:10:00Z
DCGM_FI_DEV_GPU_UTIL{gpu="0", UUID="GPU-a",Hostname="h1"} 2147483632
DCGM_FI_DEV_POWER_USAGE{gpu="0", UUID="GPU-a",Hostname="h1"} 140737488355330
DCGM_FI_DEV_GPU_UTIL{gpu="0", UUID="GPU-a",Hostname="h1"} 70 1767225720000
"""


def test_dcgm_series_counter_reset_gap_duplicate_and_sentinels(tmp_path: Path) -> None:
    f = tmp_path / "series.prom"
    f.write_text(SERIES)
    out = dcgm_prom.parse(f)
    rows = _rows(out, "gpu_samples")
    # 00:00, 00:01 (duplicated scrape merged), 00:10, and 00:02 from the trailing ms timestamp
    assert [r["sampled_at"] for r in rows] == [
        datetime(2026, 1, 1, 0, 0), datetime(2026, 1, 1, 0, 1), datetime(2026, 1, 1, 0, 10), datetime(2026, 1, 1, 0, 2)
    ]
    assert rows[2]["gpu_util_pct"] is None and rows[2]["power_w"] is None  # int32 / fp64 blanks
    assert rows[3]["gpu_util_pct"] == 70.0
    text = " | ".join(out.warnings)
    assert "energy counter reset" in text
    assert "duplicated sample" in text
    assert "gap(s)" in text
    assert "out of order" in text
    assert "2 DCGM blank/sentinel" in text
    assert not out.rejects


def test_dcgm_prom_without_samples_is_unreadable(tmp_path: Path) -> None:
    f = tmp_path / "empty.prom"
    f.write_text("# HELP DCGM_FI_DEV_GPU_UTIL x\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n")
    with pytest.raises(UnreadableFile):
        dcgm_prom.parse(f)


def test_unknown_gpu_model_kept_with_warning(tmp_path: Path) -> None:
    f = tmp_path / "x.prom"
    f.write_text('DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-z",modelName="Acme Turbo 9000"} 5\n')
    out = dcgm_prom.parse(f)
    assert _rows(out, "gpu_samples")[0]["gpu_model"] == "Acme Turbo 9000"
    assert any("unknown GPU model" in w and "Acme Turbo 9000" in w for w in out.warnings)


# ---------------------------------------------------------------- dcgm_csv
def _write_dcgm_csv(path: Path, rows: list[list[str]]) -> None:
    header = ["timestamp", "hostname", "gpu", "uuid", "modelName", "GPU_I_PROFILE", "GPU_I_ID", "namespace",
              "pod", "container", "job_id", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE",
              "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_MEMORY_TEMP"]
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)


def test_dcgm_csv_bad_inputs(tmp_path: Path) -> None:
    f = tmp_path / "d.csv"
    base = ["h1", "0", "GPU-a", "NVIDIA A100-SXM4-80GB", "", "", "ns", "p1", "c", "42"]
    _write_dcgm_csv(f, [
        ["2026-01-01T00:00:00Z", *base, "10", "100", "900", "5000", "40"],
        ["2026-01-01T00:01:00Z", *base, "abc", "100", "900", "6000", "40"],          # line 3: non-numeric
        ["2026-01-01T00:02:00Z", *base, "30", "100", "900", "100", "9223372036854775794"],  # reset + sentinel
        ["2026-01-01T00:02:00Z", *base, "30", "100", "900", "100", "41"],            # duplicate row
        ["2026-01-01T00:30:00Z", *base, "40", "100", "900", "200", "41"],            # gap
        ["2026-01-01T00:29:00+01:00", *base, "40", "100", "900", "300", "41"],       # 23:29 UTC, out of order
    ])
    assert dcgm_csv.detect(f, f.read_bytes())
    out = dcgm_csv.parse(f)
    rows = _rows(out, "gpu_samples")
    assert [r["_source_line"] for r in rows] == [2, 4, 6, 7]  # line 3 rejected, line 5 duplicate dropped
    assert [(r.line, r.rule) for r in out.rejects] == [(3, "non_numeric")]
    assert rows[0]["fb_total_mib"] == 1000.0 and rows[0]["mig_profile"] is None
    assert rows[1]["memory_temp_c"] is None
    assert rows[3]["sampled_at"] == datetime(2025, 12, 31, 23, 29)
    text = " | ".join(out.warnings)
    for needle in ("duplicated sample", "out of order", "energy counter reset", "memory_temp_c=1"):
        assert needle in text
    load_in_memory(out, "usage")


def test_dcgm_csv_generated_matches_plain_read(tmp_path: Path) -> None:
    from tools.generate.bulk_dcgm import generate

    f = tmp_path / "gen.csv"
    n = generate(f, gpus=3, days=1, seed=7)
    out = dcgm_csv.parse(f)
    con = load_in_memory(out, "usage")
    got = con.sql("select count(*), sum(gpu_util_pct), sum(power_w), max(fb_total_mib) from raw.gpu_samples").fetchone()
    want = duckdb.sql(
        f"select count(*), sum(DCGM_FI_DEV_GPU_UTIL), sum(DCGM_FI_DEV_POWER_USAGE), "
        f"max(DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE) from read_csv('{f}')"
    ).fetchone()
    assert got[0] == n == 3 * 1440
    assert got[1] == pytest.approx(want[1]) and got[2] == pytest.approx(want[2]) and got[3] == want[3]
    assert not out.rejects and not any("gap" in w for w in out.warnings)


# ---------------------------------------------------------------- nvidia-smi
def test_nvidia_smi_query_gpu_h100_load(usage: Path) -> None:
    out = nvidia_smi.parse_query_gpu(usage / "nvidia_smi/nvidia_smi_query_gpu_h100-80gb-hbm3_load.csv")
    (row,) = _rows(out, "gpu_samples")
    assert row["sampled_at"] == datetime(2026, 7, 14, 8, 12, 53, 353000)
    assert row["gpu_model"] == "NVIDIA H100 80GB HBM3"
    assert (row["gpu_util_pct"], row["fb_used_mib"], row["fb_total_mib"], row["power_w"]) == (100.0, 19818.0, 81559.0, 631.95)
    assert row["mig_enabled"] is False and row["host"] is None  # hostname is [N/A]
    assert nvidia_smi.TZ_WARNING in out.warnings
    load_in_memory(out, "usage")


def test_nvidia_smi_mig_has_null_utilisation(usage: Path) -> None:
    out = nvidia_smi.parse_query_gpu(usage / "nvidia_smi/nvidia_smi_query_gpu_h200-mig_load.csv")
    (row,) = _rows(out, "gpu_samples")
    assert row["mig_enabled"] is True
    assert row["gpu_util_pct"] is None and row["mem_copy_util_pct"] is None
    assert row["fb_used_mib"] == 16959.0 and row["power_w"] == 295.01
    assert any("MIG enabled" in w for w in out.warnings)


def test_nvidia_smi_l40s_bare_na_is_null(usage: Path) -> None:
    out = nvidia_smi.parse_query_gpu(usage / "nvidia_smi/nvidia_smi_query_gpu_l40s_load.csv")
    (row,) = _rows(out, "gpu_samples")
    assert row["memory_temp_c"] is None and row["gpu_util_pct"] == 9.0
    assert not out.rejects


def test_nvidia_smi_compute_apps(usage: Path) -> None:
    out = nvidia_smi.parse_compute_apps(usage / "nvidia_smi/nvidia_smi_query_compute_apps_h100-80gb-hbm3_load.csv")
    rows = _rows(out, "gpu_processes")
    assert [(r["pid"], r["process_name"], r["used_memory_mib"]) for r in rows] == [
        (11327, "/root/tools/memhog", 2566.0), (11328, "/root/tools/memhog", 1542.0), (11345, "./gpu_burn", 15690.0)
    ]
    assert [r["_source_line"] for r in rows] == [2, 3, 4]
    empty = nvidia_smi.parse_compute_apps(usage / "nvidia_smi/nvidia_smi_query_compute_apps_h200_idle.csv")
    assert empty.tables["gpu_processes"].num_rows == 0 and not empty.rejects
    load_in_memory(out, "usage")


def test_nvidia_smi_bad_values(tmp_path: Path) -> None:
    f = tmp_path / "q.csv"
    f.write_text(
        "timestamp, name, uuid, utilization.gpu [%], memory.used [MiB], power.draw [W]\n"
        "2026/07/14 08:00:00.000, Acme X1, GPU-1, 50 %, 100 MiB, [Not Supported]\n"
        "yesterday, Acme X1, GPU-1, 60 %, 100 MiB, 10 W\n"
        "2026/07/14 08:01:00.000, Acme X1, GPU-1, lots, 100 MiB, 10 W\n"
    )
    out = nvidia_smi.parse_query_gpu(f)
    rows = _rows(out, "gpu_samples")
    assert [r["_source_line"] for r in rows] == [2, 4]
    assert rows[0]["power_w"] is None and rows[1]["gpu_util_pct"] is None
    assert sorted((r.line, r.rule) for r in out.rejects) == [(3, "invalid_timestamp"), (4, "non_numeric")]
    assert any("unknown GPU model" in w for w in out.warnings)


def test_nvidia_gpu_exporter_matches_csv_capture(usage: Path) -> None:
    out = nvidia_exporter_prom.parse(usage / "nvidia_smi/nvidia_gpu_exporter_prometheus_h100_load.metrics")
    (row,) = _rows(out, "gpu_samples")
    # same capture as nvidia_smi_query_gpu_h100-80gb-hbm3_load.csv: identical readings after unit conversion
    assert row["gpu_uuid"] == "GPU-00000000-0000-0000-0000-000000000000"
    assert (row["gpu_util_pct"], row["fb_used_mib"], row["fb_total_mib"], row["power_w"]) == (100.0, 19818.0, 81559.0, 631.95)
    assert row["sm_clock_mhz"] == pytest.approx(1980.0)
    assert out.tables["gpu_processes"].num_rows == 3
    load_in_memory(out, "usage")


# ---------------------------------------------------------------- Slurm
def test_sacct_snowman_jobs_and_steps(usage: Path) -> None:
    path = usage / "slurm/hb_jobinfo_sacct_snowman_delim.txt"
    out = slurm_sacct.parse(path)
    jobs = {r["job_id"]: r for r in _rows(out, "gpu_jobs")}
    n_lines = len(path.read_text(encoding="utf-8").splitlines())
    assert n_lines == 242 and len(jobs) == 100  # 142 step lines folded
    j = jobs["8150389"]  # line 209: 2 x a100, Elapsed 2-21:09:16, .batch gpuutil=100, gpumem=37956M
    assert (j["gpu_count"], j["gpu_type"], j["elapsed_s"]) == (2.0, "a100", 2 * 86400 + 21 * 3600 + 9 * 60 + 16)
    assert j["gpu_hours"] == pytest.approx(2 * 248956 / 3600)
    assert (j["gpu_util_pct"], j["gpu_mem_max_mib"]) == (100.0, 37956.0)
    assert (j["state"], j["state_raw"], j["_source_line"]) == ("CANCELLED", "CANCELLED by 33128806", 209)
    v = jobs["7965768"]  # typed + untyped gres: 1 GPU, not 2; gpumem 20500736K
    assert (v["gpu_count"], v["gpu_type"], v["gpu_util_pct"]) == (1.0, "v100", 90.0)
    assert v["gpu_mem_max_mib"] == pytest.approx(20500736 / 1024)
    assert jobs["7971484"]["gpu_count"] == 4.0 and jobs["7971484"]["n_nodes"] == 2
    assert jobs["5908801_3"]["array_job_id"] == "5908801"
    assert jobs["4047445"]["started_at"] is None and jobs["4047445"]["node_list"] is None  # Start=None
    assert jobs["8298012"]["state"] == "RUNNING" and jobs["8298012"]["ended_at"] is None  # End=Unknown
    assert sum((r["gpu_count"] or 0) > 0 for r in jobs.values()) == 9
    assert {r["state"] for r in jobs.values()} <= set(slurm_sacct.STATE_MAP.values())
    con = load_in_memory(out, "usage")
    assert con.sql("select round(sum(gpu_hours), 4) from raw.gpu_jobs").fetchone()[0] == pytest.approx(
        round((55702 + 41003 + 4 + 2 * 248956 + 23643 + 137879 + 31549 + 4 * 233 + 2 * 2415) / 3600, 4)
    )


def test_sacct_timezone_option(usage: Path) -> None:
    out = slurm_sacct.parse_sacct(usage / "slurm/hb_jobinfo_sacct_snowman_delim.txt", tz="Europe/Amsterdam")
    first = _rows(out, "gpu_jobs")[0]  # 2023-08-31T12:29:47 CEST
    assert first["submitted_at"] == datetime(2023, 8, 31, 10, 29, 47)


def test_sacct_pipe_header_reversed_and_bad(tmp_path: Path) -> None:
    f = tmp_path / "s.txt"
    f.write_text(
        "JobID|JobName|User|Account|Partition|State|Submit|Start|End|Elapsed|AllocTRES|TRESUsageInMax|NodeList|NNodes|\n"
        "10|a|u|acc|gpu|COMPLETED|2024-01-01T00:00:00|2024-01-01T01:00:00|2024-01-01T00:30:00|00:30:00|gres/gpu:h100=2|||1|\n"
        "11|b|u|acc|gpu|OUT_OF_MEMORY|2024-01-01T00:00:00|2024-01-01T01:00:00|2024-01-01T02:00:00|01:00:00|gres/gpu:h100=2,gres/gpu:a100=1||n1|1|\n"
        "11.0|b|||||2024-01-01T01:00:00|2024-01-01T01:00:00|2024-01-01T02:00:00|01:00:00||gres/gpuutil=40,gres/gpumem=2G|n1|1|\n"
        "12|c|u|acc|gpu|WEIRD|2024-01-01T00:00:00|soon|2024-01-01T02:00:00|23:08.5|||n1|1|\n"
    )
    assert slurm_sacct.detect(f, f.read_bytes())
    out = slurm_sacct.parse(f)
    rows = {r["job_id"]: r for r in _rows(out, "gpu_jobs")}
    assert sorted((r.line, r.rule) for r in out.rejects) == [(2, "period_reversed"), (5, "invalid_timestamp")]
    assert set(rows) == {"11"}
    j = rows["11"]
    assert (j["gpu_count"], j["gpu_type"], j["gpu_util_pct"], j["gpu_mem_max_mib"]) == (3.0, "a100,h100", 40.0, 2048.0)
    assert (j["state"], j["account"], j["gpu_hours"]) == ("OUT_OF_MEMORY", "acc", 3.0)
    load_in_memory(out, "usage")


def test_sacct_line_without_a_job_id_is_rejected_not_dropped(tmp_path: Path) -> None:
    # Line 3 holds a whole job (2 GPUs for an hour) but no JobID: it is neither a job nor a step of one,
    # so it must be a reject naming its line; the blank line 4 is no record and no reject.
    f = tmp_path / "s.txt"
    f.write_text(
        "JobID|State|Start|End|AllocTRES|NodeList\n"
        "30|COMPLETED|2024-01-01T00:00:00|2024-01-01T01:00:00|gres/gpu=2|n1\n"
        "|COMPLETED|2024-01-01T00:00:00|2024-01-01T01:00:00|gres/gpu=2|n1\n"
        "|||||\n"
    )
    out = slurm_sacct.parse(f)
    assert [(r.line, r.rule, r.column) for r in out.rejects] == [(3, "missing_value", "JobID")]
    assert [(r["job_id"], r["gpu_hours"]) for r in _rows(out, "gpu_jobs")] == [("30", 2.0)]


def test_sacct_job_that_ran_without_a_start_is_rejected(tmp_path: Path) -> None:
    # Job 40 ran an hour on 2 GPUs (Elapsed 01:00:00) but has no Start: no hour can hold its 2 GPU-hours, so
    # it is a reject naming line 2, not a job the hourly usage silently leaves out. Job 41 never started
    # (Start Unknown, Elapsed 0: cancelled while pending) and job 42 is whole: both kept (0 and 2 GPU-hours).
    f = tmp_path / "s.txt"
    f.write_text(
        "JobID|State|Start|End|Elapsed|AllocTRES|NodeList\n"
        "40|COMPLETED||2024-01-01T01:00:00|01:00:00|gres/gpu=2|n1\n"
        "41|CANCELLED|Unknown|2024-01-01T01:00:00|00:00:00|gres/gpu=2|None assigned\n"
        "42|COMPLETED|2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|gres/gpu=2|n1\n"
    )
    out = slurm_sacct.parse(f)
    assert [(r.line, r.rule, r.column, r.message) for r in out.rejects] == [
        (2, "missing_value", "Start", "job 40 ran 3600 s but has no Start")]
    assert not any("empty State" in w for w in out.warnings)
    assert [(r["job_id"], r["gpu_hours"]) for r in _rows(out, "gpu_jobs")] == [("41", 0.0), ("42", 2.0)]


def test_sacct_unknown_state_and_duration_formats(tmp_path: Path) -> None:
    f = tmp_path / "t.txt"
    f.write_text(
        "JobID\tState\tStart\tEnd\tElapsed\tAllocTRES\n"
        "20\tWEIRD\t2024-01-01T00:00:00\t2024-01-01T00:23:08\t23:08.500\tgres/gpu=1\n"
        "21\tCOMPLETED\t2024-01-01T00:00:00\t2024-01-02T02:03:04\t1-02:03:04\tcpu=1\n"
        "22\t\t2024-01-01T00:00:00\t2024-01-01T01:00:00\t01:00:00\tgres/gpu=1\n"
    )
    out = slurm_sacct.parse(f)
    rows = {r["job_id"]: r for r in _rows(out, "gpu_jobs")}
    assert rows["20"]["state"] is None and rows["20"]["elapsed_s"] == pytest.approx(1388.5)
    assert rows["22"]["state"] is None and "1 job(s) with an empty State, state left NULL: 22" in out.warnings
    assert rows["21"]["elapsed_s"] == 93784 and rows["21"]["gpu_count"] == 0
    assert any("unknown Slurm state" in w for w in out.warnings)


def test_scontrol_inventory(usage: Path) -> None:
    out = slurm_scontrol.parse(usage / "slurm/hb_jobinfo_scontrol_nodes_tres.txt")
    rows = {r["node"]: r for r in _rows(out, "gpu_inventory")}
    assert len(rows) == 183
    assert (rows["a100gpu1"]["gpu_count"], rows["a100gpu1"]["gpu_type"], rows["a100gpu1"]["mem_mib"]) == (4.0, "a100", 514404.0)
    assert rows["v100gpu34"]["gpu_count"] == 1.0  # last line has no trailing newline
    assert sum(r["gpu_count"] for r in rows.values()) == 6 * 4 + 34
    load_in_memory(out, "usage")


def test_scontrol_multiline_blocks(tmp_path: Path) -> None:
    f = tmp_path / "n.txt"
    f.write_text(
        "NodeName=g1 Arch=x86_64 CoresPerSocket=8\n   Gres=gpu:h100:8(S:0-1)\n   CfgTRES=cpu=64,mem=1T,billing=64\n"
        "NodeName=g2 Arch=x86_64\n   Gres=(null)\n   CfgTRES=cpu=x,mem=1G\n"
    )
    out = slurm_scontrol.parse(f)
    rows = _rows(out, "gpu_inventory")
    assert [(r["node"], r["gpu_count"], r["gpu_type"], r["mem_mib"]) for r in rows] == [("g1", 8.0, "h100", 1048576.0)]
    assert [(r.line, r.rule) for r in out.rejects] == [(4, "non_numeric")]


# ---------------------------------------------------------------- OpenCost
def test_opencost_example(usage: Path) -> None:
    out = opencost.parse(usage / "opencost_allocation_compute_response_example.json")
    rows = {r["job_id"]: r for r in _rows(out, "gpu_jobs")}
    assert set(rows) == {"kube-system", "opencost", "prometheus"}
    oc = rows["opencost"]
    assert (oc["scheduler"], oc["namespace"], oc["pod"], oc["cluster"]) == ("kubernetes", "opencost", "opencost-75dc7dcc49-xdx5t", "cluster-one")
    assert oc["started_at"] == datetime(2023, 1, 18, 11, 38, 45) and oc["ended_at"] == datetime(2023, 1, 20, 11, 38)
    assert oc["elapsed_s"] == pytest.approx(2879.235705 * 60)
    assert oc["gpu_hours"] == 0.0 and oc["gpu_util_pct"] is None
    assert any("no allocation has GPU hours" in w for w in out.warnings)
    load_in_memory(out, "usage")


def test_opencost_gpu_fields_and_bad(tmp_path: Path) -> None:
    f = tmp_path / "a.json"
    f.write_text(
        '{"code":200,"data":[{"ml":{"name":"ml","properties":{"namespace":"ml","labels":{"team":"a"}},'
        '"start":"2026-01-01T00:00:00Z","end":"2026-01-02T00:00:00Z","minutes":1440,"cpuCoreHours":1,'
        '"gpuCount":2,"gpuHours":36,"gpuRequestAverage":1.5,"gpuUsageAverage":0.75},'
        '"bad":{"name":"bad","properties":{},"start":"2026-01-02T00:00:00Z","end":"2026-01-01T00:00:00Z"}}]}'
    )
    assert opencost.detect(f, f.read_bytes())
    out = opencost.parse(f)
    (row,) = _rows(out, "gpu_jobs")
    assert (row["gpu_count"], row["gpu_hours"], row["gpu_util_pct"], row["labels"]) == (1.5, 36.0, 50.0, '{"team": "a"}')
    assert [(r.line, r.rule) for r in out.rejects] == [(2, "period_reversed")]
    truncated = tmp_path / "t.json"
    truncated.write_text('{"data": [{"x": {"properties": {}')
    with pytest.raises(UnreadableFile):
        opencost.parse(truncated)
