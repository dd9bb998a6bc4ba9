"""Fractions of a GPU in the usage parsers: MIG profiles in sacct, MIG slices folded to physical GPUs in
scontrol, DCGM's hpc_job column, and the raw contract columns that carry them (NULL for old files)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from sources.common import ParseOutput
from sources.usage import dcgm_csv, dcgm_prom, slurm_sacct, slurm_scontrol
from sources.usage._shared import mig_profile, mig_slices
from tests.contract_helpers import load_in_memory
from warehouse.raw import contract_columns, ensure_raw_table, replace_file

H100 = "nvidia_h100_80gb_hbm3"


def _rows(output: ParseOutput, table: str) -> list[dict]:
    return output.tables[table].to_pylist()


@pytest.mark.parametrize(
    ("name", "profile"),
    [
        (f"{H100}_3g.40gb", "3g.40gb"),
        ("NVIDIA_A100-SXM4-40GB_1G.5GB", "1g.5gb"),
        (f"{H100}_1g.10gb+me", "1g.10gb+me"),
        ("nvidia_h200_141gb_1g.18gb+ME", "1g.18gb+me"),
        (H100, None),
        ("a100", None),
        (f"{H100}_3g.40gb_x", None),  # the profile must end the name
        (None, None),
    ],
)
def test_mig_profile_is_read_off_the_end_of_a_type_name(name: str | None, profile: str | None) -> None:
    assert mig_profile(name) == profile


def test_mig_slices_is_the_number_before_g() -> None:
    assert [mig_slices(p) for p in ("1g.10gb", "3g.40gb", "7g.80gb", "2g.20gb+me")] == [1, 3, 7, 2]


# ---------------------------------------------------------------- sacct
def test_sacct_mig_profile_from_typed_gres(tmp_path: Path) -> None:
    f = tmp_path / "mig.txt"
    f.write_text(
        "JobID|JobName|State|Start|End|Elapsed|AllocTRES\n"
        f"40|one|COMPLETED|2024-01-01T00:00:00|2024-01-01T02:00:00|02:00:00|billing=8,cpu=8,gres/gpu=1,gres/gpu:{H100}_3g.40gb=1,node=1\n"
        f"41|two|COMPLETED|2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|gres/gpu=3,gres/gpu:{H100}_1g.10gb=2,gres/gpu:{H100}_3g.40gb=1\n"
        f"41.0|two|COMPLETED|2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|gres/gpu:{H100}_1g.10gb=2,gres/gpu=2\n"
        "42|whole|COMPLETED|2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|gres/gpu=2,gres/gpu:a100=2\n"
        "43|plus|COMPLETED|2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|gres/gpu:NVIDIA_H200_1G.18GB+ME=1\n"
        "44|cpu|COMPLETED|2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|cpu=4,node=1\n"
    )
    out = slurm_sacct.parse(f)
    jobs = {r["job_id"]: r for r in _rows(out, "gpu_jobs")}
    assert set(jobs) == {"40", "41", "42", "43", "44"}
    one = jobs["40"]
    assert (one["mig_profile"], one["gpu_type"], one["gpu_count"], one["gpu_hours"]) == (
        "3g.40gb", f"{H100}_3g.40gb", 1.0, 2.0)
    two = jobs["41"]  # 2 x 1g.10gb beat 1 x 3g.40gb
    assert (two["mig_profile"], two["gpu_count"], two["gpu_type"]) == (
        "1g.10gb", 3.0, f"{H100}_1g.10gb,{H100}_3g.40gb")
    assert jobs["42"]["mig_profile"] is None and jobs["42"]["gpu_type"] == "a100"
    assert jobs["43"]["mig_profile"] == "1g.18gb+me" and jobs["43"]["gpu_count"] == 1.0
    assert jobs["44"]["mig_profile"] is None
    mixed = [w for w in out.warnings if "more than one MIG profile" in w]
    assert len(mixed) == 1 and mixed[0].startswith("1 job(s)") and mixed[0].endswith(": 41")
    con = load_in_memory(out, "usage")
    assert con.sql("select job_id, mig_profile from raw.gpu_jobs where mig_profile is not null order by job_id").fetchall() == [
        ("40", "3g.40gb"), ("41", "1g.10gb"), ("43", "1g.18gb+me")]


def test_sacct_real_dump_has_no_mig_profile(public_data: Path) -> None:
    out = slurm_sacct.parse(public_data / "usage/slurm/hb_jobinfo_sacct_snowman_delim.txt")
    rows = _rows(out, "gpu_jobs")
    assert len(rows) == 100 and all(r["mig_profile"] is None for r in rows)
    assert not any("MIG" in w for w in out.warnings)


# ---------------------------------------------------------------- scontrol
def test_scontrol_mig_node_folds_slices_to_physical_gpus(tmp_path: Path) -> None:
    f = tmp_path / "nodes.txt"
    f.write_text(
        "NodeName=h1 Arch=x86_64 CoresPerSocket=32 ClusterName=habrok\n"
        f"   Gres=gpu:{H100}_3g.40gb:1(S:0),gpu:{H100}_2g.20gb:1(S:0),gpu:{H100}_1g.10gb:2(S:0)\n"
        "   CfgTRES=cpu=64,mem=1T,billing=64,gres/gpu=4\n"
        f"NodeName=h2 CfgTRES=cpu=64,mem=1T,gres/gpu=10,gres/gpu:{H100}=2,gres/gpu:{H100}_1g.10gb=8\n"
        "NodeName=a1 CfgTRES=cpu=64,mem=512G,gres/gpu=4,gres/gpu:a100=4 ClusterName=(null)\n"
        "NodeName=c1 CfgTRES=cpu=128,mem=512G\n"
    )
    out = slurm_scontrol.parse(f)
    rows = {r["node"]: r for r in _rows(out, "gpu_inventory")}
    h1 = rows["h1"]  # one H100 cut 3+2+1+1 of 7 slices
    assert (h1["gpu_count"], h1["mig_devices"], h1["physical_gpu_count"], h1["cluster"]) == (4.0, 4.0, 1.0, "habrok")
    assert h1["gres_detail"] == f"{H100}_1g.10gb=2,{H100}_2g.20gb=1,{H100}_3g.40gb=1"
    assert h1["gpu_type"] == f"{H100}_1g.10gb,{H100}_2g.20gb,{H100}_3g.40gb"
    h2 = rows["h2"]  # 2 whole GPUs + 8 one-slice devices = 2 + ceil(8 / 7)
    assert (h2["gpu_count"], h2["mig_devices"], h2["physical_gpu_count"]) == (10.0, 8.0, 4.0)
    assert h2["gres_detail"] == f"{H100}=2,{H100}_1g.10gb=8" and h2["cluster"] is None
    a1 = rows["a1"]
    assert (a1["physical_gpu_count"], a1["mig_devices"], a1["gres_detail"], a1["cluster"]) == (4.0, 0.0, "a100=4", None)
    c1 = rows["c1"]
    assert (c1["gpu_count"], c1["physical_gpu_count"], c1["mig_devices"], c1["gres_detail"]) == (0.0, 0.0, 0.0, None)
    con = load_in_memory(out, "usage")
    assert con.sql("select sum(gpu_count), sum(physical_gpu_count), sum(mig_devices) from raw.gpu_inventory").fetchone() == (
        18.0, 9.0, 12.0)


def test_scontrol_real_dump_physical_equals_gpu_count(public_data: Path) -> None:
    out = slurm_scontrol.parse(public_data / "usage/slurm/hb_jobinfo_scontrol_nodes_tres.txt")
    rows = {r["node"]: r for r in _rows(out, "gpu_inventory")}
    assert all(r["physical_gpu_count"] == r["gpu_count"] and r["mig_devices"] == 0 for r in rows.values())
    assert rows["a100gpu1"]["gres_detail"] == "a100=4" and rows["v100gpu34"]["gres_detail"] == "v100=1"
    assert rows["euclid1"]["gres_detail"] is None and all(r["cluster"] is None for r in rows.values())


# ---------------------------------------------------------------- DCGM hpc_job
def _dcgm_csv(path: Path, job_headers: list[str], values: list[list[str]]) -> Path:
    header = ["timestamp", "hostname", "gpu", "uuid", *job_headers, "DCGM_FI_DEV_GPU_UTIL"]
    lines = [",".join(header)] + [
        ",".join([f"2026-01-01T00:0{i}:00Z", "n1", "0", "GPU-1", *v, "50"]) for i, v in enumerate(values)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_dcgm_csv_hpc_job_header_is_the_job_id(tmp_path: Path) -> None:
    out = dcgm_csv.parse(_dcgm_csv(tmp_path / "a.csv", ["hpc_job"], [["5908801"], [""]]))
    assert [r["job_id"] for r in _rows(out, "gpu_samples")] == ["5908801", None]
    both = dcgm_csv.parse(_dcgm_csv(tmp_path / "b.csv", ["job_id", "HPC_JOB"], [["old", "77"], ["old", ""], ["", ""]]))
    assert [r["job_id"] for r in _rows(both, "gpu_samples")] == ["77", "old", None]
    assert load_in_memory(both, "usage").sql("select count(job_id) from raw.gpu_samples").fetchone() == (2,)


def test_dcgm_prom_hpc_job_label_is_the_job_id(tmp_path: Path) -> None:
    f = tmp_path / "s.prom"
    f.write_text(
        'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1",Hostname="n1",hpc_job="5908801"} 40\n'
        'DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-2",Hostname="n1",hpc_job="",job_id="12"} 60\n'
    )
    rows = {r["gpu_uuid"]: r for r in _rows(dcgm_prom.parse(f), "gpu_samples")}
    assert (rows["GPU-1"]["job_id"], rows["GPU-2"]["job_id"]) == ("5908801", "12")


# ---------------------------------------------------------------- the raw contract
def test_contract_declares_the_fraction_columns() -> None:
    jobs, inventory = contract_columns("gpu_jobs"), contract_columns("gpu_inventory")
    assert {c: jobs[c] for c in ("mig_profile", "gpu_share", "gpu_memory_share")} == {
        "mig_profile": "VARCHAR", "gpu_share": "DOUBLE", "gpu_memory_share": "DOUBLE"}
    assert {c: inventory[c] for c in ("physical_gpu_count", "gres_detail", "mig_devices", "cluster")} == {
        "physical_gpu_count": "DOUBLE", "gres_detail": "VARCHAR", "mig_devices": "DOUBLE", "cluster": "VARCHAR"}


def test_contract_new_columns_are_null_for_a_parser_that_does_not_emit_them() -> None:
    old = pa.table({"scheduler": ["slurm"], "job_id": ["1"], "gpu_count": [2.0], "source_format": ["x"],
                    "_source_line": pa.array([2], pa.int64())})
    con = load_in_memory(ParseOutput(tables={"gpu_jobs": old}), "usage")
    assert con.sql("select gpu_count, mig_profile, gpu_share, gpu_memory_share from raw.gpu_jobs").fetchone() == (
        2.0, None, None, None)


def test_contract_older_raw_table_gains_the_new_columns() -> None:
    """A ledger whose raw tables predate the columns: the next load adds them, old rows hold NULL."""
    con = duckdb.connect()
    con.execute("create schema raw")
    con.execute("create table raw.gpu_inventory (node varchar, gpu_count double, _file_hash varchar, "
                "_source_file varchar, _source_line bigint, _format varchar, _loaded_at timestamp)")
    con.execute("insert into raw.gpu_inventory (node, gpu_count, _file_hash) values ('old1', 4, 'f0')")
    ensure_raw_table(con, "gpu_inventory")
    new = pa.table({"node": ["h1"], "gpu_count": [4.0], "physical_gpu_count": [1.0], "mig_devices": [4.0],
                    "_source_line": pa.array([1], pa.int64())})
    replace_file(con, ParseOutput(tables={"gpu_inventory": new}), file_hash="f1", source_file="n.txt",
                 fmt="slurm_scontrol_nodes", family="usage")
    assert con.sql("select node, physical_gpu_count, mig_devices from raw.gpu_inventory order by node").fetchall() == [
        ("h1", 1.0, 4.0), ("old1", None, None)]
