"""Instance names in benchmark files resolve through the one instance catalogue, for every provider.

Fixtures: tests/data/constructed/benchmarks/instances/ (the real vLLM `.commands.json` sidecar with
only `gpu_type` changed; see the README there) and, for LLMPerf, guidellm, GenAI-Perf and our CSVs,
the real samples with one hardware key added in the test.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from sources.benchmarks import genai_perf, guidellm, llmperf, own_formats, vllm_commands, vllm_nightly_table
from sources.benchmarks._hardware import hardware_from_text
from sources.catalog import recognise
from tests.conftest import REPO
from tests.contract_helpers import load_in_memory
from warehouse.reference import INSTANCE_TYPES, gpu_model_from_name, instance_of

INSTANCES = REPO / "tests" / "data" / "constructed" / "benchmarks" / "instances"
SEED = REPO / "dbt" / "seeds" / "instance_gpu_map.csv"
SAMPLES = REPO / "samples" / "inputs" / "benchmarks"
GENAI = REPO / "tests" / "sources" / "fixtures" / "benchmarks" / "profile_export_genai_perf.CONSTRUCTED.json"


@pytest.mark.parametrize(
    "prefix,sku,vms,gpu,gpus",
    [
        ("aws-g5-2xlarge", "g5.2xlarge", 1, "A10G-24GB", 1),
        ("aws-p4d-24xlarge", "p4d.24xlarge", 2, "A100-40GB", 16),
        ("aws-p5-48xlarge", "p5.48xlarge", 1, "H100-SXM-80GB", 8),
        ("gcp-a2-highgpu-8g", "a2-highgpu-8g", 1, "A100-40GB", 8),
        ("gcp-a3-highgpu-8g", "a3-highgpu-8g", 1, "H100-SXM-80GB", 8),
        ("gcp-g2-standard-4", "g2-standard-4", 1, "L4-24GB", 1),
        ("oci-bm-gpu-h100-8", "BM.GPU.H100.8", 1, "H100-SXM-80GB", 8),
        ("oci-vm-gpu-a10-1", "VM.GPU.A10.1", 1, "A10-24GB", 1),
        ("digitalocean-gpu-h100x8", "gpu-h100x8-640gb", 1, "H100-SXM-80GB", 8),
        ("vultr-vbm-8-h100", "vbm-112c-2048gb-8-h100-gpu", 1, "H100-SXM-80GB", 8),
        ("verda-1h100", "1H100.80S.30V", 1, "H100-SXM-80GB", 1),
        ("gpuhunt-8x-h100", None, None, "H100-SXM-80GB", 8),
    ],
)
def test_commands_sidecar_resolves_every_provider(prefix: str, sku: str | None, vms: int | None, gpu: str, gpus: int) -> None:
    path = INSTANCES / f"{prefix}__tp8_pp1_sharegpt_qps_01.commands.json"
    fmt = recognise(path, "benchmarks")
    assert fmt is not None and fmt.name == vllm_commands.FORMAT_NAME
    out = vllm_commands.parse(path)
    row = out.tables["benchmark_run_commands"].to_pylist()[0]
    assert (row["vm_sku"], row["vm_count"], row["gpu_model"], row["gpu_count"]) == (sku, vms, gpu, gpus)
    assert out.warnings == []
    # the untouched command still gives the layout and the model
    assert (row["tensor_parallel"], row["model_id"]) == (8, "meta-llama/Llama-3.3-70B-Instruct")
    load_in_memory(out, "benchmarks")


def test_unknown_instance_is_a_warning_naming_file_and_name_never_a_gpu() -> None:
    path = INSTANCES / "unknown-p9z__tp8_pp1_sharegpt_qps_01.commands.json"
    out = vllm_commands.parse(path)
    row = out.tables["benchmark_run_commands"].to_pylist()[0]
    assert (row["vm_sku"], row["gpu_model"], row["gpu_count"], row["vm_count"]) == (None, None, None, 1)
    assert len(out.warnings) == 1
    assert path.name in out.warnings[0] and "'p9z.96xlarge'" in out.warnings[0]


@pytest.mark.parametrize(
    "text",
    ["p4d.24xlarge", "Standard_ND96asr_v4", "a3-highgpu-8g", "BM.GPU.H100.8", "gpu-h100x8-640gb", "vbm-112c-2048gb-8-h100-gpu"],
)
def test_parser_and_dbt_seed_read_the_same_catalogue(text: str) -> None:
    hw = hardware_from_text(f"{text} x 1")
    with SEED.open(newline="") as fh:
        seed = {r["sku"]: r for r in csv.DictReader(fh)}
    assert (hw["gpu_model"], hw["gpu_count"]) == (seed[text]["gpu_model"], float(seed[text]["gpu_count"]))


@pytest.mark.parametrize(
    "text",
    [
        "p4de.24xlarge x 1",  # not p4d
        "Standard_NC6s_v3 x 1",  # not Standard_NC6
        "g2-standard-48 x 1",  # not g2-standard-4
    ],
)
def test_longest_name_wins(text: str) -> None:
    name = text.rsplit(" x ", 1)[0]
    assert hardware_from_text(text)["vm_sku"] == name
    assert hardware_from_text(text)["gpu_model"] == instance_of(name).gpu_model


@pytest.mark.parametrize(
    "text",
    ["p9z.96xlarge", "Standard_NC6_v9", "2x Standard_ND96isr_v9_H100", "a3-highgpu-3g", "H100", "B95907", "039F-D0DA-4055"],
)
def test_no_guess_for_names_the_catalogue_lacks(text: str) -> None:
    # an uncatalogued machine that mentions a GPU, a bare GPU name, and price-list ids are no instances
    hw = hardware_from_text(text)
    assert (hw["gpu_model"], hw["gpu_count"], hw["unknown"]) == (None, None, text)


def test_price_ids_and_gpu_names_are_kept_for_prices_but_not_instances() -> None:
    kinds = {(p, s): k for p, s, _g, _c, k, _n in INSTANCE_TYPES}
    assert kinds[("gcp", "039F-D0DA-4055")] == "price_id" and kinds[("jarvislabs", "H100")] == "gpu"
    assert instance_of("H100") is None and instance_of("g5.2xlarge").gpu_model == "A10G-24GB"
    assert gpu_model_from_name("H100") == "H100-SXM-80GB"


def test_nightly_table_gpu_column_uses_the_catalogue(tmp_path: Path) -> None:
    rows = [{"Test name": "tp8_pp1_qps_inf", "GPU": "1xno-ib-p5.48xlarge x 2", "Tput (req/s)": 1.0},
            {"Test name": "tp8_pp1_qps_16", "GPU": "1xno-ib-p7q.48xlarge x 2", "Tput (req/s)": 1.0}]
    path = tmp_path / "benchmark_results.json"
    path.write_text(json.dumps(rows))
    out = vllm_nightly_table.parse(path)
    got = {r["run_label"]: r for r in out.tables["benchmark_runs"].to_pylist()}
    assert (got["tp8_pp1_qps_inf"]["gpu_model"], got["tp8_pp1_qps_inf"]["gpu_count"]) == ("H100-SXM-80GB", 16)
    assert got["tp8_pp1_qps_16"]["gpu_model"] is None
    assert len(out.warnings) == 1 and "row 2" in out.warnings[0] and "p7q.48xlarge" in out.warnings[0]


def _with(path: Path, tmp_path: Path, **keys: object) -> Path:
    doc = json.loads(path.read_text())
    doc.update(keys)
    out = tmp_path / path.name
    out.write_text(json.dumps(doc))
    return out


def test_llmperf_metadata_instance(tmp_path: Path) -> None:
    # LLMPerf writes `--metadata k=v` pairs at the top level of the summary
    path = _with(SAMPLES / "llmperf_together_70b_summary.json", tmp_path, instance_type="a3-highgpu-8g")
    row = llmperf.parse_summary(path).tables["benchmark_runs"].to_pylist()[0]
    assert (row["hardware"], row["vm_sku"], row["gpu_model"], row["gpu_count"]) == (
        "a3-highgpu-8g", "a3-highgpu-8g", "H100-SXM-80GB", 8)
    unknown = llmperf.parse_summary(_with(SAMPLES / "llmperf_together_70b_summary.json", tmp_path, instance_type="zz.huge"))
    assert unknown.tables["benchmark_runs"].to_pylist()[0]["gpu_model"] is None
    assert any("llmperf_together_70b_summary.json" in w and "'zz.huge'" in w for w in unknown.warnings)


def test_genai_perf_metadata_instance(tmp_path: Path) -> None:
    path = _with(GENAI, tmp_path, metadata={"instance_type": "Standard_ND96isr_H100_v5"})
    out = genai_perf.parse(path)
    row = out.tables["benchmark_runs"].to_pylist()[0]
    assert (row["vm_sku"], row["gpu_model"], row["gpu_count"]) == ("Standard_ND96isr_H100_v5", "H100-SXM-80GB", 8)
    assert out.warnings == []


def test_guidellm_metadata_instance(tmp_path: Path) -> None:
    path = _with(SAMPLES / "guidellm_benchmarks_stripped.json", tmp_path, metadata={"instance_type": "BM.GPU.H100.8"})
    out = guidellm.parse(path)
    rows = out.tables["benchmark_runs"].to_pylist()
    assert rows and all((r["vm_sku"], r["gpu_model"], r["gpu_count"]) == ("BM.GPU.H100.8", "H100-SXM-80GB", 8) for r in rows)
    plain = guidellm.parse(SAMPLES / "guidellm_benchmarks_stripped.json").tables["benchmark_runs"].to_pylist()
    assert all(r["gpu_model"] is None and r["hardware"] is None for r in plain)


def test_own_csv_gpu_model_may_name_the_instance(tmp_path: Path) -> None:
    lines = (SAMPLES / "training_runs.csv").read_text().splitlines()
    header = next(csv.reader([lines[0]]))
    rows = list(csv.DictReader(lines))[:4]
    rows[0].update(gpu_model="p4d.24xlarge", gpu_count="")  # count from the catalogue
    rows[1].update(gpu_model="BM.GPU.H100.8 x 2", gpu_count="")  # two machines
    rows[2].update(gpu_model="a3-highgpu-8g", gpu_count="12")  # more than the machine has: kept, flagged
    rows[3].update(gpu_model="p9z.96xlarge", gpu_count="8")  # unknown: no GPU, flagged
    path = tmp_path / "training_runs.csv"
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    spec = next(s for s in own_formats.SPECS if s.table == "training_runs")
    out = own_formats.make_parse(spec)(path)
    got = [(r["gpu_model"], r["gpu_count"]) for r in out.tables["training_runs"].to_pylist()]
    assert got == [("A100-40GB", 8), ("H100-SXM-80GB", 16), ("H100-SXM-80GB", 12), ("p9z.96xlarge", 8)]
    assert len(out.warnings) == 2
    assert "line 4" in out.warnings[0] and "exceeds the 8 GPUs" in out.warnings[0]
    assert "training_runs.csv line 5" in out.warnings[1] and "'p9z.96xlarge'" in out.warnings[1]
    load_in_memory(out, "benchmarks")
