"""Time-sliced GPUs (policy gpu_time_slicing): pods asking for plain `nvidia.com/gpu` on a GPU the NVIDIA device
plugin advertises as 4 replicas each hold a quarter of it, not a whole GPU.

The inputs are case C of tests/golden_physical (four Succeeded pods on node k8s-gpu1, each 10:00-11:00 on
2025-06-16, one H100 sampled every hour of that day, owned site site-k8s at 2.00 USD per GPU-hour) with the HAMi
shares taken out of the pods: each asks for `nvidia.com/gpu: 1` only (nlp-infer/chat-b for `nvidia.com/gpu.shared:
1`, the same replica under the device plugin's renameByDefault). The registry adds

    gpu_time_slicing:
      - {match: ["kubernetes:*"], replicas: 8}     # 12 characters
      - {match: ["host:k8s-gpu1"], replicas: 4}    # 13 characters: the longer pattern wins for k8s-gpu1
      - {match: "kubernetes:(default)"}            # no replicas: an invalid_policy reject, not applied

By hand (docs/cost_model.md, "Fractions of a GPU"): each pod holds 1 device x 1/4 x 1 h = 0.25 GPU-hours (1/8 if
the shorter pattern won, 1 each without the policy: 4 GPUs on a 1-GPU host in hour 10:00, which the blocking
check assert_gpu_hours_not_double_counted fails). So exactly case C's figures: pool allocated 4 x 0.25 = 1 of
capacity 1 x 24 = 24, unallocated 23; each pod reads the GPU's 0.80, used 0.25 x 0.80 = 0.20, util 80 %;
vision 0.25, speech 0.25, nlp 2 x 0.25 = 0.50. Money at 2.00: vision 0.25 x 2.00 = 0.50, speech 0.50, nlp 1.00,
idle 23 x 2.00 = 46.00; capacity 24 x 2.00 = 48.00.
"""

from __future__ import annotations

import json
import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from tests import golden_cases, prefetch
from tests.golden_cases import cents, dec, differences, rows

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden_physical" / "inputs"
K8S, H100 = "kubernetes:(default)", "H100-SXM-80GB"
HOURS = Decimal("0.000001")
POLICY = """  gpu_time_slicing:
    - {match: ["kubernetes:*"], replicas: 8}
    - {match: ["host:k8s-gpu1"], replicas: 4}
    - {match: "kubernetes:(default)"}
"""


def build_time_slicing(root: Path) -> dict:
    """Case C of the physical golden inputs with plain nvidia.com/gpu pods and the policy above; one refresh."""
    inputs = root / "inputs"
    (inputs / "registry").mkdir(parents=True)
    (inputs / "usage").mkdir()
    teams = (GOLDEN / "registry" / "teams.yaml").read_text()
    assert "\npolicies:\n" in teams
    (inputs / "registry" / "teams.yaml").write_text(teams.replace("\npolicies:\n", "\npolicies:\n" + POLICY, 1))
    shutil.copy(GOLDEN / "registry" / "workloads.yaml", inputs / "registry" / "workloads.yaml")
    shutil.copy(GOLDEN / "usage" / "dcgm_k8s-gpu1_2025-06.csv", inputs / "usage" / "dcgm_k8s-gpu1_2025-06.csv")
    pods = json.loads((GOLDEN / "usage" / "k8s_pods_2025-06-16.json").read_text())
    for pod in pods["items"]:
        pod["metadata"]["annotations"].pop("hami.io/vgpu-node", None)
        pod["spec"]["schedulerName"] = "default-scheduler"
        # chat-b names the replica as the device plugin does under renameByDefault
        resource = "nvidia.com/gpu.shared" if pod["metadata"]["name"] == "chat-b" else "nvidia.com/gpu"
        for container in pod["spec"]["containers"]:
            container["resources"]["limits"] = {resource: "1"}
    (inputs / "usage" / "k8s_pods_2025-06-16.json").write_text(json.dumps(pods, indent=1))
    return golden_cases.refresh(root, inputs)


@pytest.fixture(scope="module")
def time_slicing_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("time_slicing", tmp_path_factory)


@pytest.fixture(scope="module")
def con(time_slicing_run: dict):
    with golden_cases.published(time_slicing_run) as con:
        yield con


def test_the_pool_holds_four_quarters_of_one_gpu(con) -> None:
    cols = ["billed_gpu_hours", "allocated_gpu_hours", "used_gpu_hours", "unallocated_gpu_hours", "idle_gpu_hours",
            "over_allocation_gpu_hours", "utilisation_pct"]
    got = {(r["pool_id"], r["gpu_model"], str(r["day"])): {c: r[c] for c in cols}
           for r in rows(con, "select * from fct_gpu_idle_daily")}
    want = {(K8S, H100, "2025-06-16"): dict(zip(cols, ("24", "1", "0.8", "23", "23.2", "0", "80")))}
    assert differences(got, want, HOURS) == []


def test_each_team_holds_its_quarters(con) -> None:
    got = {(r["team_id"],): {"allocated_gpu_hours": r["allocated_gpu_hours"]}
           for r in rows(con, "select * from fct_gpu_utilisation_daily")}
    want = {(team,): {"allocated_gpu_hours": h}
            for team, h in [("vision", "0.25"), ("speech", "0.25"), ("nlp", "0.5"), ("(unallocated)", "0")]}
    assert differences(got, want, HOURS) == []


def test_owned_money_follows_the_quarters(con) -> None:
    got: dict[tuple[str, str], Decimal] = {}
    for r in rows(con, "select * from fct_showback_monthly"):
        got[(r["team_id"], r["component"])] = got.get((r["team_id"], r["component"]), Decimal(0)) + dec(r["amount"])
    assert {k: cents(v) for k, v in got.items()} == {
        ("vision", "gpu_compute"): cents("0.50"), ("speech", "gpu_compute"): cents("0.50"),
        ("nlp", "gpu_compute"): cents("1.00"), ("(idle)", "idle_capacity"): cents("46.00")}


def test_the_entry_without_replicas_is_rejected_with_its_line(time_slicing_run: dict) -> None:
    ledger = duckdb.connect(str(time_slicing_run["home"] / "ledger.duckdb"), read_only=True)
    try:
        got = ledger.execute("select file_name, rule, line from audit.dq_rejects where source_family = 'registry'"
                             ).fetchall()
    finally:
        ledger.close()
    teams = (REPO / "tests" / "golden_physical" / "inputs" / "registry" / "teams.yaml").read_text().splitlines()
    # The policy block is inserted right after 'policies:'; its third entry is the block's line 4.
    line = teams.index("policies:") + 1 + 4
    assert got == [("teams.yaml", "invalid_policy", line)]
