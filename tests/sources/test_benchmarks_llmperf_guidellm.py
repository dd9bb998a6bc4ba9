"""LLMPerf (summary + individual) and guidellm parsers on the real public files."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from sources.benchmarks import guidellm, llmperf
from sources.common import UnreadableFile
from tests.contract_helpers import load_in_memory


def test_bedrock_summary(public_data: Path) -> None:
    out = llmperf.parse_summary(public_data / "benchmarks/llmperf/summary/bedrock_70b.json")
    run = out.tables["benchmark_runs"].to_pylist()[0]
    assert (run["num_prompts"], run["completed"], run["failed"]) == (150, 101, 49)
    assert run["backend_or_provider"] == "bedrock" and run["model_id"] == "meta.llama2-70b-chat-v1"
    assert run["ttft_ms_mean"] == pytest.approx(408.37363779203295)  # 0.408... s in the file
    assert run["ttft_ms_p95"] == pytest.approx(542.1029040007852)
    assert run["e2el_ms_p99"] == pytest.approx(8093.41601000051)
    assert run["output_throughput_tok_s"] == pytest.approx(62.867056292903534)
    assert run["request_throughput"] == pytest.approx(25.18838751305755 / 60)
    assert run["max_concurrency"] == 5
    assert run["run_started_at"] == datetime(2023, 12, 27, 0, 52, 9)  # epoch 1703638329
    meta = json.loads(run["metadata"])
    assert meta["results_error_code_frequency"] == {"-100": 49}  # was the repr string '{-100.0: 49}'
    assert meta["results_number_output_tokens_min"] == "120"  # string min kept verbatim
    load_in_memory(out, "benchmarks")


def test_all_summaries_load(public_data: Path) -> None:
    files = sorted((public_data / "benchmarks/llmperf/summary").glob("*.json"))
    assert len(files) == 19
    ids = set()
    for f in files:
        out = llmperf.parse_summary(f)
        assert out.rejects == []
        ids.add(out.tables["benchmark_runs"]["run_id"][0].as_py())
        load_in_memory(out, "benchmarks")
    assert len(ids) == 19
    lepton = llmperf.parse_summary(public_data / "benchmarks/llmperf/summary/lepton_70b.json")
    assert json.loads(lepton.tables["benchmark_runs"]["metadata"][0].as_py())["results_error_code_frequency"] == {"429": 130}


def test_bedrock_individual(public_data: Path) -> None:
    path = public_data / "benchmarks/llmperf/individual/bedrock_70b.json"
    raw = json.loads(path.read_text())
    out = llmperf.parse_individual(path)
    reqs = out.tables["benchmark_requests"].to_pylist()
    assert len(reqs) == 150
    failed = [r for r in reqs if not r["succeeded"]]
    assert len(failed) == 49 == sum(1 for r in raw if r["error_code"] == -100)
    assert failed[0]["error"].startswith("-100: Output too few tokens")
    assert all(r["itl_ms_mean"] is None for r in failed)  # error rows hold summed ITL, not per token
    run = out.tables["benchmark_runs"].to_pylist()[0]
    # cross-check with the summary of the same run: mean output tokens x completed
    assert run["total_output_tokens"] == round(149.75247524752476 * 101) == 15125
    assert run["ttft_ms_mean"] == pytest.approx(408.37363779203295)
    con = load_in_memory(out, "benchmarks")
    assert con.sql("select count(*) from raw.benchmark_requests where not succeeded").fetchone()[0] == 49


def test_groq_individual_seconds_to_ms(public_data: Path) -> None:
    out = llmperf.parse_individual(public_data / "benchmarks/llmperf/individual/groq_70b.json")
    reqs = out.tables["benchmark_requests"].to_pylist()
    assert all(r["succeeded"] for r in reqs)
    first = reqs[0]
    assert first["ttft_ms"] == pytest.approx(297.977801412344)
    assert first["e2el_ms"] == pytest.approx(890.0090400129557)
    assert first["itl_ms_mean"] == pytest.approx(5.879949368536472)
    assert first["tpot_ms"] == pytest.approx((0.8900090400129557 - 0.297977801412344) / 149 * 1000)


def test_llmperf_bad_inputs(tmp_path: Path) -> None:
    p = tmp_path / "s.json"
    p.write_text(json.dumps({"name": "x_summary", "model": "x", "num_concurrent_requests": 1,
                             "results_ttft_s_mean": "abc", "results_num_completed_requests": 0}))
    out = llmperf.parse_summary(p)
    assert [(r.rule, r.column) for r in out.rejects] == [("non_numeric", "results_ttft_s_mean")]
    assert out.tables["benchmark_runs"]["completed"][0].as_py() == 0
    assert any("zero" in w for w in out.warnings)
    t = tmp_path / "i.json"
    t.write_text('[{"error_code": null, "ttft_s": 0.1, "end_to_end_latency_s": 1')
    with pytest.raises(UnreadableFile):
        llmperf.parse_individual(t)


def test_guidellm_report(public_data: Path) -> None:
    out = guidellm.parse(public_data / "benchmarks/guidellm/guidellm_benchmarks_stripped.json")
    run = out.tables["benchmark_runs"].to_pylist()[0]
    assert run["run_id"] == "97ece514-8717-412f-9dba-2b42bcd9866f"  # the file's own id_
    assert (run["num_prompts"], run["completed"], run["failed"]) == (47, 46, 0)
    assert run["total_output_tokens"] == 5888 and run["total_input_tokens"] == 11827
    assert run["ttft_ms_p99"] == pytest.approx(21.281957626342773)
    assert run["e2el_ms_mean"] == pytest.approx(644.4743664368339)  # request_latency is seconds
    assert run["request_throughput"] == pytest.approx(1.5481806532737452)
    assert run["run_started_at"] == datetime(2025, 6, 5, 20, 59, 28, 182700)  # epoch 1749157168.1827
    assert run["duration_s"] == pytest.approx(29.997201442718506)
    assert json.loads(run["metadata"])["incomplete"] == 1
    reqs = out.tables["benchmark_requests"].to_pylist()
    assert len(reqs) == 1 and reqs[0]["output_tokens"] == 128 and reqs[0]["e2el_ms"] == pytest.approx(689.1846656799316)
    assert any("sampled" in w for w in out.warnings)
    load_in_memory(out, "benchmarks")


def test_guidellm_bad_inputs(tmp_path: Path) -> None:
    p = tmp_path / "g.json"
    p.write_text(json.dumps({"benchmarks": [{"type_": "generative_benchmark", "metrics": {}},
                                            {"id_": "b2", "request_totals": {"successful": 0, "total": 3, "errored": 3}}]}))
    out = guidellm.parse(p)
    assert [r.rule for r in out.rejects] == ["missing_identity"]
    assert out.tables["benchmark_runs"]["run_id"].to_pylist() == ["b2"]
    assert any("zero" in w for w in out.warnings)
    p.write_text('{"benchmarks": [')
    with pytest.raises(UnreadableFile):
        guidellm.parse(p)
