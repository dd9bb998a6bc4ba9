"""Contract, detection and bundled-sample checks for the whole `benchmarks` family."""

from __future__ import annotations

from pathlib import Path

import yaml

from sources.benchmarks.schema import TABLES
from sources.catalog import formats_for, recognise
from sources.common import read_head
from tests.conftest import REPO
from tests.contract_helpers import load_in_memory

SAMPLES = REPO / "samples" / "inputs" / "benchmarks"


def test_contract_yaml_matches_schema() -> None:
    doc = yaml.safe_load((REPO / "warehouse/contracts/benchmarks.yaml").read_text())
    declared = {t: spec["columns"] for t, spec in doc["tables"].items()}
    assert declared == TABLES


def test_every_real_file_has_exactly_one_format(public_data: Path) -> None:
    fmts = formats_for("benchmarks")
    files = [p for p in (public_data / "benchmarks").rglob("*.json")]
    assert len(files) == 84  # 56 vLLM + 22 LLMPerf + 1 guidellm + 5 MLPerf
    for p in files:
        head = read_head(p)
        matches = [f.name for f in fmts if f.detect(p, head)]
        assert len(matches) == 1, (p.name, matches)


def test_no_false_match_on_other_families(public_data: Path) -> None:
    fmts = formats_for("benchmarks")
    others = [p for p in public_data.rglob("*") if p.is_file() and "benchmarks" not in p.relative_to(public_data).parts]
    assert others
    for p in others:
        head = read_head(p)
        assert not [f.name for f in fmts if f.detect(p, head)], p


EXPECTED_SAMPLE_ROWS = {
    "llama33-70b__01_tp8_pp1__serving_meta-llama-Llama-3.3-70B-Instruct_tp8_pp1_sharegpt_qps_inf.json": {"benchmark_runs": 1, "benchmark_requests": 200},
    "cm4mlperf_datacenter_closed_llm_offline_v3.1-v4.1.json": {"benchmark_runs": 253},
    "cm4mlperf_datacenter_closed_bert99_offline_v3.0-v4.1.json": {"benchmark_runs": 147},
    "guidellm_benchmarks_stripped.json": {"benchmark_runs": 1, "benchmark_requests": 1},
    "llmperf_bedrock_70b_individual.json": {"benchmark_runs": 1, "benchmark_requests": 150},
    "llmperf_bedrock_70b_summary.json": {"benchmark_runs": 1},
    "llmperf_together_70b_summary.json": {"benchmark_runs": 1},
}


def test_bundled_samples_all_load() -> None:
    files = sorted(p for p in SAMPLES.iterdir() if p.suffix in (".json", ".csv"))
    assert len(files) == 20  # 14 JSON + 6 CSV
    commands = runs = 0
    for p in files:
        fmt = recognise(p, "benchmarks")
        assert fmt is not None, p.name
        out = fmt.parse(p)
        assert out.rejects == [], p.name
        load_in_memory(out, "benchmarks", fmt.name)
        counts = {t: tbl.num_rows for t, tbl in out.tables.items()}
        if p.name in EXPECTED_SAMPLE_ROWS:
            assert counts == EXPECTED_SAMPLE_ROWS[p.name], p.name
        commands += counts.get("benchmark_run_commands", 0)
        if fmt.name == "vllm_serving_result":
            runs += 1
    assert (commands, runs) == (4, 4)  # every bundled vLLM result has its commands sidecar
