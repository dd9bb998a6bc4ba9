"""vLLM result, commands sidecar and nightly table parsers, on the real Azure ND96asr_v4 runs."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from sources.benchmarks import vllm_commands, vllm_nightly_table, vllm_result
from sources.benchmarks._util import parse_gpu_type
from sources.common import UnreadableFile
from tests.contract_helpers import load_in_memory

STEM = "llama33-70b__01_tp8_pp1__serving_meta-llama-Llama-3.3-70B-Instruct_tp8_pp1_sharegpt_qps_inf"


@pytest.fixture(scope="module")
def vllm_dir(public_data: Path) -> Path:
    return public_data / "benchmarks" / "vllm"


def test_llama_tp8_qps_inf_summary_values(vllm_dir: Path) -> None:
    out = vllm_result.parse(vllm_dir / "summary_only" / f"{STEM}.json")
    assert out.rejects == [] and out.warnings == []
    run = out.tables["benchmark_runs"].to_pylist()[0]
    # values read by hand from the file
    assert run["completed"] == 200
    assert run["duration_s"] == pytest.approx(23.81432977400027)
    assert run["output_throughput_tok_s"] == pytest.approx(1780.3566341089636)
    assert run["ttft_ms_mean"] == pytest.approx(360.36056903502185)
    assert run["ttft_ms_p99"] == pytest.approx(450.3786364301777)
    assert run["tpot_ms_median"] == pytest.approx(36.973057458311075)
    assert run["total_output_tokens"] == 42398
    assert run["request_rate"] is None and run["request_rate_label"] == "inf"
    assert run["goodput"] is None  # the real key is "request_goodput:" with value null
    assert run["run_started_at"] == datetime(2025, 4, 14, 14, 17, 43)  # no TZ in file: taken as UTC
    assert (run["tensor_parallel"], run["pipeline_parallel"]) == (8, 1)
    assert run["result_file_stem"] == STEM
    assert run["has_per_request"] is False
    meta = json.loads(run["metadata"])
    assert meta["other_stats"]["ttft_ms"]["std"] == pytest.approx(76.91157458391265)
    assert "stripped_per_request_arrays" in meta
    con = load_in_memory(out, "benchmarks")
    assert con.sql("select output_throughput_tok_s from raw.benchmark_runs").fetchone()[0] == pytest.approx(1780.3566341089636)


def test_llama_full_file_per_request(vllm_dir: Path) -> None:
    path = vllm_dir / "full" / f"{STEM}.json"
    doc = json.loads(path.read_text())
    out = vllm_result.parse(path)
    runs = out.tables["benchmark_runs"].to_pylist()
    reqs = out.tables["benchmark_requests"].to_pylist()
    assert len(reqs) == 200
    assert runs[0]["has_per_request"] is True
    assert sum(r["output_tokens"] for r in reqs) == runs[0]["total_output_tokens"] == 42398
    assert sum(doc["output_lens"]) == 42398  # independent read of the array
    assert all(r["succeeded"] and r["error"] is None for r in reqs)  # errors "" -> succeeded
    first = reqs[0]
    assert (first["input_tokens"], first["output_tokens"]) == (13, 120)
    assert first["ttft_ms"] == pytest.approx(248.4128090000013)  # ttfts[0] = 0.2484... s
    assert first["itl_ms_max"] == pytest.approx(126.32025699986116)
    # tpot derived per request reproduces the file's own mean TPOT (requests with >1 token)
    tpots = [r["tpot_ms"] for r in reqs if r["tpot_ms"] is not None]
    assert len(tpots) == 186
    assert sum(tpots) / len(tpots) == pytest.approx(doc["mean_tpot_ms"], rel=1e-6)
    assert sum(r["ttft_ms"] for r in reqs) / 200 == pytest.approx(doc["mean_ttft_ms"])
    # the stripped summary of the same run gets the same run_id (dedupe in dbt)
    summary = vllm_result.parse(vllm_dir / "summary_only" / f"{STEM}.json")
    assert summary.tables["benchmark_runs"]["run_id"][0].as_py() == runs[0]["run_id"]
    con = load_in_memory(out, "benchmarks")
    assert con.sql("select count(*), sum(output_tokens) from raw.benchmark_requests").fetchone() == (200, 42398)


def test_deepseek_full_file_two_vms(vllm_dir: Path) -> None:
    path = next((vllm_dir / "full").glob("deepseek-v2.5__02_tp8_pp2_ib__*qps_inf.json"))
    out = vllm_result.parse(path)
    run = out.tables["benchmark_runs"].to_pylist()[0]
    assert (run["tensor_parallel"], run["pipeline_parallel"]) == (8, 2)
    assert run["output_throughput_tok_s"] == pytest.approx(335.7025835056669)
    assert out.tables["benchmark_requests"].num_rows == 200


def test_commands_sidecar(vllm_dir: Path) -> None:
    out = vllm_commands.parse(vllm_dir / "summary_only" / f"{STEM}.commands.json")
    row = out.tables["benchmark_run_commands"].to_pylist()[0]
    assert row["result_file_stem"] == STEM
    assert row["gpu_type"] == "Standard_ND96asr_v4 x 1"
    assert (row["vm_sku"], row["vm_count"], row["gpu_count"]) == ("Standard_ND96asr_v4", 1, 8)
    assert (row["tensor_parallel"], row["pipeline_parallel"]) == (8, 1)
    assert row["request_rate_label"] == "inf"
    assert row["model_id"] == "meta-llama/Llama-3.3-70B-Instruct"
    ds = next((vllm_dir / "summary_only").glob("deepseek-v2.5__02_tp8_pp2_ib__*qps_16.commands.json"))
    row = vllm_commands.parse(ds).tables["benchmark_run_commands"].to_pylist()[0]
    assert (row["vm_count"], row["gpu_count"], row["network"]) == (2, 16, "infiniband")
    assert (row["tensor_parallel"], row["pipeline_parallel"]) == (8, 2)
    load_in_memory(out, "benchmarks")


def test_commands_flags_win_over_name(tmp_path: Path) -> None:
    p = tmp_path / "run_tp8_pp1.commands.json"
    p.write_text(json.dumps({"client_command": "vllm serve m --tensor-parallel-size 4 -pp 2", "gpu_type": "Standard_ND96asr_v4 x 1"}))
    row = vllm_commands.parse(p).tables["benchmark_run_commands"].to_pylist()[0]
    assert (row["tensor_parallel"], row["pipeline_parallel"]) == (4, 2)


@pytest.mark.parametrize(
    "text,sku,count,gpus,network",
    [
        ("Standard_ND96asr_v4 x 1", "Standard_ND96asr_v4", 1, 8, None),
        ("ib-Standard_ND96asr_v4 x 2", "Standard_ND96asr_v4", 2, 16, "infiniband"),
        ("no-ib-Standard_ND96asr_v4 x 2", "Standard_ND96asr_v4", 2, 16, "ethernet"),
        ("Standard_ND96asr_v4-GPUDirect-RDMA-Infiniband x 2", "Standard_ND96asr_v4", 2, 16, "infiniband"),
        ("Standard_ND96asr_v4-IB-trial-1 x 2", "Standard_ND96asr_v4", 2, 16, "infiniband"),
        ("1xno-ib-Standard_ND96asr_v4 x 2", "Standard_ND96asr_v4", 2, 16, "ethernet"),
    ],
)
def test_gpu_type_variants(text: str, sku: str, count: int, gpus: int, network: str | None) -> None:
    hw = parse_gpu_type(text)
    assert (hw["vm_sku"], hw["vm_count"], hw["gpu_count"], hw["network"]) == (sku, count, gpus, network)
    assert hw["gpu_model"] == "A100-40GB"  # the instance catalogue gives the canonical gpu_catalog id


def test_nightly_table(vllm_dir: Path) -> None:
    out = vllm_nightly_table.parse(vllm_dir / "summary_only" / "llama33-70b__01_tp8_pp1__benchmark_results.json")
    rows = {r["run_label"]: r for r in out.tables["benchmark_runs"].to_pylist()}
    assert len(rows) == 4
    inf = rows["tp8_pp1_qps_inf"]
    assert inf["output_throughput_tok_s"] == pytest.approx(1780.3566341089636)
    assert inf["ttft_ms_p99"] == pytest.approx(450.3786364301777)
    assert (inf["vm_count"], inf["gpu_count"], inf["num_prompts"]) == (1, 8, 200)
    assert inf["request_rate"] is None and inf["request_rate_label"] == "inf"
    assert rows["tp8_pp1_qps_01"]["request_rate"] == 1.0
    assert rows["tp8_pp1_qps_04"]["request_throughput"] == pytest.approx(3.1751913448302957)
    load_in_memory(out, "benchmarks")


# ---- bad inputs -------------------------------------------------------------------------------

def _write(tmp_path: Path, doc: object, name: str = "result.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return p


def test_unknown_version_loads_what_is_there(tmp_path: Path) -> None:
    doc = {"date": "20250601-120000", "endpoint_type": "openai-chat", "label": "canary", "model_id": "m/x",
           "num_prompts": 10, "completed": 9, "failed": 1, "request_goodput": 1.5, "mean_e2el_ms": 900.0,
           "p50_e2el_ms": 880.0, "p99.9_ttft_ms": 77.0, "p90_ttft_ms": 60.0, "team": "search"}
    out = vllm_result.parse(_write(tmp_path, doc))
    run = out.tables["benchmark_runs"].to_pylist()[0]
    assert any("missing keys" in w for w in out.warnings)
    assert (run["completed"], run["failed"], run["goodput"]) == (9, 1, 1.5)
    assert run["backend_or_provider"] == "openai-chat" and run["run_label"] == "canary"
    assert (run["e2el_ms_mean"], run["e2el_ms_median"]) == (900.0, 880.0)
    meta = json.loads(run["metadata"])
    assert meta["other_stats"]["ttft_ms"] == {"p99.9": 77.0, "p90": 60.0}
    assert meta["team"] == "search"
    load_in_memory(out, "benchmarks")


def test_no_identity_is_rejected(tmp_path: Path) -> None:
    out = vllm_result.parse(_write(tmp_path, {"completed": 5, "request_throughput": 1.0}))
    assert out.tables == {}
    assert [r.rule for r in out.rejects] == ["missing_identity"]


def test_percentiles_as_strings(tmp_path: Path) -> None:
    doc = {"date": "20250414-141743", "model_id": "m", "completed": 3, "p99_ttft_ms": "450.5", "mean_ttft_ms": "n/a"}
    out = vllm_result.parse(_write(tmp_path, doc))
    run = out.tables["benchmark_runs"].to_pylist()[0]
    assert run["ttft_ms_p99"] == 450.5
    assert run["ttft_ms_mean"] is None
    assert [(r.rule, r.column) for r in out.rejects] == [("non_numeric", "mean_ttft_ms")]
    assert any("strings were converted" in w for w in out.warnings)


def test_zero_completed_is_kept_and_flagged(tmp_path: Path) -> None:
    doc = {"date": "20250414-141743", "model_id": "m", "num_prompts": 5, "completed": 0, "duration": 1.0,
           "request_throughput": 0.0, "output_throughput": 0.0, "mean_ttft_ms": None,
           "input_lens": [10, 10], "output_lens": [0, 0], "ttfts": [0.0, 0.0], "itls": [[], []],
           "errors": ["Timeout", "HTTP 500"]}
    out = vllm_result.parse(_write(tmp_path, doc))
    assert out.tables["benchmark_runs"]["completed"][0].as_py() == 0
    assert any("zero" in w for w in out.warnings)
    reqs = out.tables["benchmark_requests"].to_pylist()
    assert [r["succeeded"] for r in reqs] == [False, False] and reqs[1]["error"] == "HTTP 500"


def test_truncated_json_is_unreadable(tmp_path: Path, vllm_dir: Path) -> None:
    p = tmp_path / "trunc.json"
    p.write_bytes((vllm_dir / "full" / f"{STEM}.json").read_bytes()[:5000])
    assert vllm_result.detect(p, p.read_bytes())  # recognised by content ...
    with pytest.raises(UnreadableFile) as err:  # ... but cannot be read
        vllm_result.parse(p)
    assert err.value.line is not None
