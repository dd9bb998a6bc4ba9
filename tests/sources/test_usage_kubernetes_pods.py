"""`kubernetes_pods`: kubectl / API pod lists -> raw.gpu_jobs, on a constructed real-shaped PodList
(tests/data/usage/README.md) plus variants written in tmp_path."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from sources.catalog import recognise
from sources.common import UnreadableFile
from sources.usage import kubernetes_pods
from tests.contract_helpers import load_in_memory

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "usage" / "kubernetes_pods_gpu_mix.json"


@pytest.fixture(scope="module")
def pods() -> dict[str, dict[str, Any]]:
    out = kubernetes_pods.parse(FIXTURE)
    return {r["job_id"]: r for r in out.tables["gpu_jobs"].to_pylist()}


def _pod(name: str, resources: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", **extra.get("metadata", {})},
        "spec": {"containers": [{"name": "c", "resources": resources}], "nodeName": "n1"},
        "status": extra.get("status", {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"}),
    }


def _write(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(json.dumps(doc, indent=4))
    return path


def test_kubernetes_pods_recognised_by_content(tmp_path: Path, public_data: Path) -> None:
    assert recognise(FIXTURE, "usage").name == "kubernetes_pods"
    kubectl = _write(tmp_path / "k.json", {"apiVersion": "v1", "items": [{"apiVersion": "v1", "kind": "Pod", **_pod("p", {})}],
                                           "kind": "List", "metadata": {"resourceVersion": ""}})
    assert recognise(kubectl, "usage").name == "kubernetes_pods"
    empty = _write(tmp_path / "e.json", {"apiVersion": "v1", "items": [], "kind": "List", "metadata": {}})
    assert recognise(empty, "usage").name == "kubernetes_pods"
    opencost = public_data / "usage/opencost_allocation_compute_response_example.json"
    assert not kubernetes_pods.detect(opencost, opencost.read_bytes())
    node_list = _write(tmp_path / "nodes.json", {"apiVersion": "v1", "kind": "NodeList", "items": [{"metadata": {}}]})
    assert not kubernetes_pods.detect(node_list, node_list.read_bytes())


def test_kubernetes_pods_rows_rejects_and_skips() -> None:
    out = kubernetes_pods.parse(FIXTURE)
    assert out.tables["gpu_jobs"].num_rows == 3  # 5 pods: one CPU-only skipped, one rejected
    assert [(r.line, r.rule, r.column, r.value) for r in out.rejects] == [(5, "non_numeric", "nvidia.com/gpu", "abc")]
    assert "ml-batch/batch-embed-2fj9k" in out.rejects[0].message
    assert out.warnings == ["1 pod(s) without GPU resources skipped"]


def test_kubernetes_pods_hami_shared_pod(pods: dict[str, dict[str, Any]]) -> None:
    p = pods["ml-inference/vllm-small-7d9f8b6c5-x2x4p"]
    assert (p["scheduler"], p["cluster"], p["namespace"], p["pod"], p["node_list"], p["n_nodes"]) == (
        "kubernetes", None, "ml-inference", "vllm-small-7d9f8b6c5-x2x4p", "gpu-node-03", 1)
    assert json.loads(p["labels"]) == {"app.kubernetes.io/name": "vllm-small", "pod-template-hash": "7d9f8b6c5",
                                       "team": "nlp"}
    assert (p["state"], p["state_raw"]) == ("COMPLETED", "Succeeded")
    assert (p["submitted_at"], p["started_at"], p["ended_at"]) == (
        datetime(2026, 3, 2, 7, 59, 41), datetime(2026, 3, 2, 8), datetime(2026, 3, 2, 10))
    assert (p["elapsed_s"], p["gpu_count"], p["gpu_hours"]) == (7200.0, 1.0, 2.0)  # devices x hours, not shares
    assert (p["gpu_share"], p["gpu_memory_share"], p["mig_profile"], p["gpu_type"]) == (0.25, 0.25, None, None)
    assert (p["source_format"], p["_source_line"]) == ("kubernetes_pods", 1)


def test_kubernetes_pods_mig_pod(pods: dict[str, dict[str, Any]]) -> None:
    p = pods["research/mig-notebook-0"]
    assert (p["gpu_count"], p["mig_profile"], p["gpu_share"], p["gpu_memory_share"]) == (2.0, "1g.10gb", None, None)
    assert (p["state"], p["started_at"], p["ended_at"], p["elapsed_s"], p["gpu_hours"]) == (
        "RUNNING", datetime(2026, 3, 2, 9, 15), None, None, None)  # still running: no end, no hours yet
    assert p["node_list"] == "gpu-node-07" and p["_source_line"] == 2


def test_kubernetes_pods_whole_gpu_pod(pods: dict[str, dict[str, Any]]) -> None:
    p = pods["training/llama-ft-worker-0"]
    assert (p["gpu_count"], p["mig_profile"], p["gpu_share"]) == (2.0, None, None)  # 1 + 1 over two containers
    assert (p["cluster"], p["gpu_type"]) == ("train-east", "NVIDIA-H100-80GB-HBM3")
    assert (p["state"], p["state_raw"], p["ended_at"]) == ("FAILED", "Failed", datetime(2026, 3, 2, 1, 30))  # latest finish
    assert (p["elapsed_s"], p["gpu_hours"]) == (12600.0, 7.0)


def test_kubernetes_pods_load_into_the_raw_contract() -> None:
    con = load_in_memory(kubernetes_pods.parse(FIXTURE), "usage")
    assert con.sql("select job_id, gpu_share, gpu_memory_share, mig_profile from raw.gpu_jobs order by _source_line").fetchall() == [
        ("ml-inference/vllm-small-7d9f8b6c5-x2x4p", 0.25, 0.25, None), ("research/mig-notebook-0", None, None, "1g.10gb"),
        ("training/llama-ft-worker-0", None, None, None)]
    assert con.sql("select sum(gpu_hours), count(labels::json ->> 'team') from raw.gpu_jobs").fetchone() == (9.0, 1)


def test_kubernetes_pods_single_pod_requests_and_vgpu(tmp_path: Path) -> None:
    status = {"phase": "Succeeded", "startTime": "2026-01-01T01:00:00+01:00",
              "containerStatuses": [{"state": {"terminated": {"finishedAt": "2026-01-01T00:30:00Z"}}}]}
    pod = _pod("solo", {"requests": {"nvidia.com/vgpu": 3, "nvidia.com/gpucores": 50}}, status=status)
    (row,) = kubernetes_pods.parse(_write(tmp_path / "p.json", {"apiVersion": "v1", "kind": "Pod", **pod})
                                   ).tables["gpu_jobs"].to_pylist()
    assert (row["job_id"], row["gpu_count"], row["gpu_share"], row["gpu_memory_share"]) == ("ns/solo", 3.0, 0.5, None)
    assert (row["started_at"], row["ended_at"], row["gpu_hours"]) == (
        datetime(2026, 1, 1, 0), datetime(2026, 1, 1, 0, 30), 1.5)  # +01:00 start converted to UTC


def test_kubernetes_pods_mig_variants_and_shares_across_containers(tmp_path: Path) -> None:
    media = _pod("media", {"limits": {"nvidia.com/mig-1g.10gb.me": "1"}})
    mixed = _pod("mixed", {"limits": {"nvidia.com/mig-1g.10gb": "1", "nvidia.com/mig-3g.40gb": "2"}})
    single = _pod("single", {"limits": {"nvidia.com/gpu": "1"}},
                  metadata={"labels": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"}})
    shared = _pod("shared", {"limits": {"nvidia.com/gpu": "1", "nvidia.com/gpucores": "20"}})
    shared["spec"]["containers"].append({"name": "d", "resources": {"limits": {"nvidia.com/gpu": "3"}}})
    hami_default = _pod("default", {"limits": {"nvidia.com/gpumem-percentage": "50"}},
                        metadata={"annotations": {"cluster": "east"}})
    cpu = _pod("cpu", {"limits": {"cpu": "1", "nvidia.com/gpu": "0"}})
    doc = {"apiVersion": "v1", "kind": "PodList", "items": [media, mixed, single, shared, hami_default, cpu]}
    out = kubernetes_pods.parse(_write(tmp_path / "l.json", doc))
    rows = {r["pod"]: r for r in out.tables["gpu_jobs"].to_pylist()}
    assert rows["media"]["mig_profile"] == "1g.10gb+me"
    assert (rows["mixed"]["mig_profile"], rows["mixed"]["gpu_count"]) == ("3g.40gb", 3.0)
    assert (rows["single"]["mig_profile"], rows["single"]["gpu_type"]) == ("1g.5gb", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb")
    assert (rows["shared"]["gpu_count"], rows["shared"]["gpu_share"]) == (4.0, pytest.approx((0.2 + 3) / 4))
    assert (rows["default"]["gpu_count"], rows["default"]["gpu_memory_share"], rows["default"]["cluster"]) == (
        1.0, 0.5, "east")
    assert "cpu" not in rows and out.rejects == []
    assert any("more than one MIG profile" in w and "ns/mixed" in w for w in out.warnings)
    assert any("only some GPU containers state a HAMi share" in w and "ns/shared" in w for w in out.warnings)
    assert "1 pod(s) without GPU resources skipped" in out.warnings


def test_kubernetes_pods_bad_values_reject_only_their_pod(tmp_path: Path) -> None:
    items = [
        _pod("ok", {"limits": {"nvidia.com/gpu": 1}}),
        _pod("pct", {"limits": {"nvidia.com/gpu": 1, "nvidia.com/gpucores": "150"}}),
        _pod("neg", {"limits": {"nvidia.com/mig-1g.10gb": -1}}),
        _pod("milli", {"limits": {"nvidia.com/gpu": "500m"}}),
        _pod("when", {"limits": {"nvidia.com/gpu": 1}}, status={"phase": "Running", "startTime": "yesterday"}),
        _pod("rev", {"limits": {"nvidia.com/gpu": 1}}, status={
            "phase": "Failed", "startTime": "2026-01-02T00:00:00Z",
            "containerStatuses": [{"state": {"terminated": {"finishedAt": "2026-01-01T00:00:00Z"}}}]}),
        "not a pod",
        {"metadata": {"name": "odd", "namespace": "ns"}, "spec": {"containers": [{"resources": {"limits": ["x"]}}]}},
    ]
    out = kubernetes_pods.parse(_write(tmp_path / "b.json", {"apiVersion": "v1", "kind": "PodList", "items": items}))
    assert [r["pod"] for r in out.tables["gpu_jobs"].to_pylist()] == ["ok"]
    assert [(r.line, r.rule) for r in out.rejects] == [
        (2, "non_numeric"), (3, "non_numeric"), (4, "non_numeric"), (5, "invalid_timestamp"), (6, "period_reversed"),
        (7, "not_an_object"), (8, "malformed_pod")]
    assert "ns/pct" in out.rejects[0].message and out.rejects[0].column == "nvidia.com/gpucores"
    assert "'yesterday'" in out.rejects[3].message and "ns/when" in out.rejects[3].message


def test_gpu_resources_the_ledger_does_not_price_are_rejected_or_warned_never_skipped(tmp_path: Path) -> None:
    """`amd.com/gpu` and `gpu.intel.com/i915` say nothing of a priced GPU: a pod asking only for them is a reject
    naming the resources as asked (item 1: two containers, 2 + 1 devices; item 2), not one of the pods without
    GPUs; item 3 asks for one whole NVIDIA GPU beside them and loads that GPU (gpu_count 1) with a warning;
    item 4 asks for none."""
    amd = _pod("amd", {"limits": {"amd.com/gpu": 2}})
    amd["spec"]["containers"].append({"name": "d", "resources": {"requests": {"amd.com/gpu": "1"}}})
    items = [
        amd,
        _pod("intel", {"limits": {"gpu.intel.com/i915": 1}}),
        _pod("both", {"limits": {"nvidia.com/gpu": 1, "amd.com/gpu": 1}}),
        _pod("cpu", {"limits": {"cpu": "4", "amd.com/gpu": 0}}),
    ]
    out = kubernetes_pods.parse(_write(tmp_path / "p.json", {"apiVersion": "v1", "kind": "PodList", "items": items}))
    assert [(r["pod"], r["gpu_count"]) for r in out.tables["gpu_jobs"].to_pylist()] == [("both", 1.0)]
    assert [(r.line, r.rule, r.column, r.value) for r in out.rejects] == [
        (1, "unsupported_gpu_resource", "amd.com/gpu", "amd.com/gpu: 2, 1"),
        (2, "unsupported_gpu_resource", "gpu.intel.com/i915", "gpu.intel.com/i915: 1")]
    assert out.rejects[0].message.startswith("pod ns/amd asks for amd.com/gpu: 2, 1: a GPU resource the ledger")
    assert "1 pod(s) without GPU resources skipped" in out.warnings
    assert any(w.endswith("loaded): ns/both (amd.com/gpu: 1)") for w in out.warnings)


def test_time_sliced_replicas_load_as_devices_with_a_warning(tmp_path: Path) -> None:
    """`nvidia.com/gpu.shared` (the NVIDIA device plugin's time-sliced replicas under renameByDefault) are devices:
    item 1 asks for 1 + 1 replicas over two containers (gpu_count 2), item 2 for a whole GPU and a replica
    (gpu_count 2); dbt makes each replica 1 / replicas of a GPU where policy gpu_time_slicing matches. A warning
    names both pods; a replica count of 0 is no GPU (item 3 skipped)."""
    ts = _pod("ts", {"limits": {"nvidia.com/gpu.shared": 1}})
    ts["spec"]["containers"].append({"name": "d", "resources": {"requests": {"nvidia.com/gpu.shared": "1"}}})
    items = [ts, _pod("both", {"limits": {"nvidia.com/gpu": 1, "nvidia.com/gpu.shared": 1}}),
             _pod("cpu", {"limits": {"cpu": "4", "nvidia.com/gpu.shared": 0}})]
    out = kubernetes_pods.parse(_write(tmp_path / "p.json", {"apiVersion": "v1", "kind": "PodList", "items": items}))
    assert [(r["pod"], r["gpu_count"]) for r in out.tables["gpu_jobs"].to_pylist()] == [("ts", 2.0), ("both", 2.0)]
    assert out.rejects == []
    assert any(w.startswith("2 pod(s) ask for nvidia.com/gpu.shared (time-sliced replicas)") and w.endswith(
        ": ns/ts, ns/both") for w in out.warnings), out.warnings
    assert "1 pod(s) without GPU resources skipped" in out.warnings


def test_kubernetes_pods_unreadable_files(tmp_path: Path) -> None:
    truncated = tmp_path / "t.json"
    truncated.write_text('{"apiVersion": "v1", "kind": "PodList", "items": [{"metadata": {')
    with pytest.raises(UnreadableFile, match="not valid JSON"):
        kubernetes_pods.parse(truncated)
    with pytest.raises(UnreadableFile, match="not a Kubernetes Pod"):
        kubernetes_pods.parse(_write(tmp_path / "n.json", {"apiVersion": "v1", "kind": "NodeList", "items": []}))
