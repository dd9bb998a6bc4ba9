"""MLPerf (cm4mlperf) and GenAI-Perf parsers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sources.benchmarks import genai_perf, mlperf_cm
from sources.common import UnreadableFile
from tests.contract_helpers import load_in_memory

FIXTURES = Path(__file__).parent / "fixtures" / "benchmarks"


def test_mlperf_offline(public_data: Path) -> None:
    path = public_data / "benchmarks/mlperf/cm4mlperf_datacenter_closed_llm_offline_v3.1-v4.1.json"
    raw = json.loads(path.read_text())
    out = mlperf_cm.parse(path)
    t = out.tables["benchmark_runs"]
    assert t.num_rows == len(raw) == 253
    assert len(set(t["run_id"].to_pylist())) == 253
    rows = t.to_pylist()
    giga = [r for r in rows if r["backend_or_provider"] == "GigaComputing" and r["model_id"] == "llama2-70b-99"
            and r["tool_version"] == "v4.1"]
    assert len(giga) == 1
    g = giga[0]
    assert g["result_value"] == pytest.approx(31263.8)
    assert g["result_unit"] == "tokens/s"  # file says Samples/s
    assert g["gpu_model"] == "NVIDIA H200-SXM-141GB" and g["accelerators_total"] == 8
    assert g["scenario"] == "Offline"
    assert json.loads(g["metadata"])["units_as_written"] == "Samples/s"
    juniper = [r for r in rows if r["backend_or_provider"] == "JuniperNetworks" and r["result_value"] == pytest.approx(82749.6)]
    assert {r["accelerators_total"] for r in juniper} == {32}  # 8 per node x 4 nodes
    # v3.1 GPT-J results really are samples/s (~100 per 8xH100), not tokens
    gptj31 = {r["result_unit"] for r in rows if r["model_id"].startswith("gptj") and r["tool_version"] == "v3.1"}
    assert gptj31 == {"samples/s"}
    na = [r for r in rows if r["accelerators_total"] is None]
    assert len(na) == sum(1 for r in raw if r["accelerators_per_node"] == "N/A") == 3
    load_in_memory(out, "benchmarks")


def test_mlperf_server_and_power(public_data: Path) -> None:
    server = mlperf_cm.parse(public_data / "benchmarks/mlperf/cm4mlperf_datacenter_closed_llm_server_v3.1-v4.1.json")
    rows = server.tables["benchmark_runs"].to_pylist()
    v40 = {r["result_unit"] for r in rows if r["model_id"].startswith("llama2-70b") and r["tool_version"] == "v4.0"}
    assert v40 == {"queries/s"}  # ~70/s per 8xH100: real queries
    assert {r["result_unit"] for r in rows if r["tool_version"] == "v4.1"} == {"tokens/s"}
    power = mlperf_cm.parse(public_data / "benchmarks/mlperf/cm4mlperf_datacenter_closed_llm_power_offline_v3.1-v4.1.json")
    assert power.tables["benchmark_runs"].num_rows == 14
    assert len(power.rejects) == 10 and {r.rule for r in power.rejects} == {"missing_result"}


def test_mlperf_bad_inputs(tmp_path: Path) -> None:
    p = tmp_path / "m.json"
    p.write_text(json.dumps([{"Model": "llama2-70b-99", "Scenario": "Offline", "Result": "12.5x", "Units": "Samples/s",
                              "version": "v4.1", "accelerators_per_node": 8, "number_of_nodes": 1},
                             {"Scenario": "Offline", "Result": 1.0}]))
    out = mlperf_cm.parse(p)
    assert sorted(r.rule for r in out.rejects) == ["missing_identity", "non_numeric"]
    assert "benchmark_runs" in out.tables and out.tables["benchmark_runs"].num_rows == 0
    p.write_text("[{")
    with pytest.raises(UnreadableFile):
        mlperf_cm.parse(p)


def test_genai_perf_constructed_fixture() -> None:
    path = FIXTURES / "profile_export_genai_perf.CONSTRUCTED.json"
    assert genai_perf.detect(path, path.read_bytes())
    out = genai_perf.parse(path)
    run = out.tables["benchmark_runs"].to_pylist()[0]
    assert run["tool"] == "genai-perf" and run["model_id"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert run["request_throughput"] == 7.42 and run["output_throughput_tok_s"] == 949.8
    assert (run["ttft_ms_mean"], run["ttft_ms_median"], run["ttft_ms_p95"], run["ttft_ms_p99"]) == (212.4, 198.7, 333.8, 410.5)
    assert run["itl_ms_p99"] == 27.9 and run["e2el_ms_p95"] == 3790.1
    assert run["max_concurrency"] == 16
    assert "CONSTRUCTED" in json.loads(run["metadata"])["_fixture_note"]
    load_in_memory(out, "benchmarks")


def test_genai_perf_seconds_unit_and_bad(tmp_path: Path) -> None:
    p = tmp_path / "profile_export_genai_perf.json"
    p.write_text(json.dumps({"time_to_first_token": {"unit": "s", "avg": 0.25, "p99": "0.5"},
                             "request_throughput": {"avg": 2.0}, "input_config": {"model": "m"}}))
    run = genai_perf.parse(p).tables["benchmark_runs"].to_pylist()[0]
    assert run["ttft_ms_mean"] == 250.0 and run["ttft_ms_p99"] == 500.0
    p.write_text('{"time_to_first_token": {"avg": 1')
    with pytest.raises(UnreadableFile):
        genai_perf.parse(p)
