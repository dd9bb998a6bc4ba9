"""The simulated fleet every generated file is derived from (seeded, no wall clock).

One `Fleet` holds teams, workloads, nodes (one cloud instance each, dedicated to one workload
and tagged with it), spot interruptions, the Slurm job schedule and the per-GPU busy/idle
timeline. The per-family writers only *render* this model, which is what keeps the files
consistent with each other: billed instance-hours cover exactly the hours a node was up, Slurm
jobs run only inside those hours (so used GPU-hours <= billed GPU-hours every day), DCGM
samples show the same jobs busy and the gaps idle, training/eval/media records are the same
jobs seen by their owners, and billing uses the on-demand prices the price history shows.

Time is counted in minutes from `start` (UTC midnight).
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal

from tools.generate.common import sha1_guid

MIN_PER_DAY = 1440

BASE_TEAMS = ("research", "platform", "support", "creative")


@dataclass(frozen=True)
class NodeType:
    """One instance type: provider SKU, GPUs, what DCGM calls the GPU, power envelope, prices."""

    provider: str
    sku: str
    gpus: int
    gpu_class: str  # H100 / A100 / L40S
    dcgm_model: str  # DCGM modelName / nvidia-smi name
    ledger_model: str  # the canonical name used in our own CSVs
    fb_total_mib: int
    idle_w: int
    max_w: int
    region: str
    price: str  # on-demand USD per instance-hour at `start`
    new_price: str | None = None  # price after the change (a provider price cut / rise)
    change_at: float = 0.5  # fraction of the period after which the new price applies


NODE_TYPES: dict[str, NodeType] = {
    t.sku: t
    for t in (
        NodeType("aws", "g6e.12xlarge", 4, "L40S", "NVIDIA L40S", "NVIDIA L40S", 46068, 35, 350,
                 "us-east-1", "10.49264"),
        NodeType("aws", "p5.48xlarge", 8, "H100", "NVIDIA H100 80GB HBM3", "NVIDIA H100-SXM-80GB", 81559, 70, 700,
                 "us-east-1", "98.32", "55.04", 0.5),
        NodeType("azure", "Standard_ND96isr_H100_v5", 8, "H100", "NVIDIA H100 80GB HBM3", "NVIDIA H100-SXM-80GB",
                 81559, 70, 700, "eastus", "98.32", "101.2", 0.7),
        NodeType("aws", "g6e.48xlarge", 8, "L40S", "NVIDIA L40S", "NVIDIA L40S", 46068, 35, 350,
                 "us-east-1", "30.13118"),
        NodeType("aws", "p4d.24xlarge", 8, "A100", "NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB", 40960, 55, 400,
                 "us-east-1", "32.7726", "21.957642", 0.4),
        NodeType("azure", "Standard_ND96amsr_A100_v4", 8, "A100", "NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB",
                 81920, 55, 400, "eastus", "32.77"),
        NodeType("aws", "g6e.xlarge", 1, "L40S", "NVIDIA L40S", "NVIDIA L40S", 46068, 35, 350,
                 "us-east-1", "1.861"),
    )
}
# Order in which nodes are added to the fleet (8-GPU types; the remainder uses 4- and 1-GPU L40S).
NODE_CYCLE = ("g6e.12xlarge", "p5.48xlarge", "Standard_ND96isr_H100_v5", "p5.48xlarge", "g6e.48xlarge",
              "p4d.24xlarge", "Standard_ND96amsr_A100_v4", "p5.48xlarge")

# Workloads that run on our GPUs, per GPU class, in assignment order (round robin over nodes).
WORKLOADS_BY_CLASS = {
    "H100": ("chat-assistant-70b", "llm-pretrain-7b", "batch-summarise-70b", "chat-ft-llama8b", "promo-video",
             "llm-pretrain-7b"),
    "A100": ("batch-summarise-70b", "nightly-evals", "support-lora-8b", "chat-ft-llama8b"),
    "L40S": ("search-embed", "product-images", "nightly-evals", "support-lora-8b", "product-images"),
}


@dataclass(frozen=True)
class JobShape:
    """How a workload uses a node: GPUs per job, job length (hours), GPU utilisation while busy."""

    gpus: int  # 0 = whole node
    hours: tuple[float, float]
    util: tuple[int, int]
    kind: str  # serving | training | batch | eval | media | notebook


JOB_SHAPES = {
    "chat-assistant-70b": JobShape(0, (3.0, 9.0), (45, 80), "serving"),
    "search-embed": JobShape(1, (2.0, 8.0), (25, 60), "serving"),
    "batch-summarise-70b": JobShape(0, (1.5, 5.0), (80, 97), "batch"),
    "llm-pretrain-7b": JobShape(0, (4.0, 12.0), (88, 99), "training"),
    "chat-ft-llama8b": JobShape(0, (2.0, 8.0), (85, 98), "training"),
    "support-lora-8b": JobShape(1, (0.5, 3.0), (70, 95), "training"),
    "product-images": JobShape(4, (0.75, 3.0), (75, 95), "media"),
    "promo-video": JobShape(0, (2.0, 6.0), (85, 99), "media"),
    "nightly-evals": JobShape(4, (0.5, 2.5), (60, 90), "eval"),
    "notebook": JobShape(1, (0.5, 4.0), (5, 45), "notebook"),
}


@dataclass
class Node:
    idx: int
    name: str
    type: NodeType
    workload: str
    team: str
    pricing: str  # on-demand | spot | committed
    outages: list[tuple[int, int]]  # [start_min, end_min) when the instance was not running

    @property
    def resource_id(self) -> str:
        if self.type.provider == "aws":
            return "i-" + hashlib.sha1(self.name.encode()).hexdigest()[:17]
        return (f"/subscriptions/{sha1_guid('sub-' + self.team)}/resourceGroups/rg-{self.team}/providers/"
                f"Microsoft.Compute/virtualMachines/{self.name}")


@dataclass
class Job:
    job_id: int
    node: int
    gpu_indices: tuple[int, ...]
    start: int
    end: int
    submit: int
    state: str
    exit_code: str
    workload: str
    team: str
    user: str
    util: int

    @property
    def gpus(self) -> int:
        return len(self.gpu_indices)


@dataclass
class Fleet:
    start: date
    days: int
    seed: int
    teams: list[str]
    workload_team: dict[str, str]
    notebook_workloads: list[str]
    nodes: list[Node] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)

    @property
    def minutes(self) -> int:
        return self.days * MIN_PER_DAY

    def t(self, minute: float) -> datetime:
        return datetime(self.start.year, self.start.month, self.start.day) + timedelta(minutes=minute)

    def price_at(self, sku: str, day: int) -> Decimal:
        """On-demand price of `sku` in force on day `day` (0-based)."""
        nt = NODE_TYPES[sku]
        if nt.new_price is not None and day >= self.change_day(sku):
            return Decimal(nt.new_price)
        return Decimal(nt.price)

    def change_day(self, sku: str) -> int:
        nt = NODE_TYPES[sku]
        return max(1, int(self.days * nt.change_at)) if nt.new_price else 10**9


def team_ids(teams: int) -> list[str]:
    """The first four are the sample registry's teams; more are `team-05`, `team-06`, ..."""
    base = list(BASE_TEAMS[: max(1, teams)])
    return base + [f"team-{i:02d}" for i in range(len(base) + 1, teams + 1)]


# Owner of each sample workload (samples/inputs/registry/workloads.yaml).
SAMPLE_OWNERS = {
    "chat-assistant-70b": "support", "batch-summarise-70b": "support", "llm-pretrain-7b": "research",
    "chat-ft-llama8b": "research", "support-lora-8b": "support", "search-embed": "platform",
    "product-images": "creative", "promo-video": "creative", "nightly-evals": "research", "code-agent": "platform",
}


def build_fleet(gpus: int, days: int, teams: int, seed: int, start: date = date(2025, 4, 1)) -> Fleet:
    """The whole simulated fleet; same arguments -> same fleet."""
    if gpus < 1 or days < 1 or teams < 1:
        raise ValueError("gpus, days and teams must be >= 1")
    ids = team_ids(teams)
    owner = {w: (t if t in ids else ids[BASE_TEAMS.index(t) % len(ids)]) for w, t in SAMPLE_OWNERS.items()}
    notebooks = [f"notebooks-{t}" for t in ids[len(BASE_TEAMS):]]
    for nb, t in zip(notebooks, ids[len(BASE_TEAMS):]):
        owner[nb] = t
    fleet = Fleet(start, days, seed, ids, owner, notebooks)
    rng = random.Random(f"fleet-{seed}")

    # Nodes: cycle of 8-GPU types; the remainder as 4-GPU and 1-GPU L40S instances.
    skus: list[str] = []
    left = gpus
    i = 0
    while left > 0:
        sku = NODE_CYCLE[i % len(NODE_CYCLE)]
        i += 1
        if NODE_TYPES[sku].gpus > left:
            sku = "g6e.12xlarge" if left >= 4 else "g6e.xlarge"
        skus.append(sku)
        left -= NODE_TYPES[sku].gpus
    class_counter: dict[str, int] = {}
    for idx, sku in enumerate(skus):
        nt = NODE_TYPES[sku]
        k = class_counter.get(nt.gpu_class, 0)
        class_counter[nt.gpu_class] = k + 1
        cycle = list(WORKLOADS_BY_CLASS[nt.gpu_class])
        if nt.gpu_class == "L40S":
            cycle += notebooks
        if nt.gpus == 1:  # a single L40S: notebooks or LoRA
            cycle = notebooks + ["support-lora-8b", "search-embed"]
        workload = cycle[k % len(cycle)]
        # Pricing: every 2nd p5 is under the savings plan; L40S/A100 on AWS alternate spot.
        if sku == "p5.48xlarge" and k % 2 == 0:
            pricing = "committed"
        elif nt.provider == "aws" and nt.gpu_class in ("L40S", "A100") and idx % 2 == 1:
            pricing = "spot"
        else:
            pricing = "on-demand"
        outages: list[tuple[int, int]] = []
        if pricing == "spot":
            for d in range(days):
                if rng.random() < 0.18:  # capacity reclaimed for a few hours
                    s = d * MIN_PER_DAY + rng.randrange(2, 20) * 60 + rng.randrange(60)
                    outages.append((s, min(s + rng.randrange(60, 240), days * MIN_PER_DAY)))
        name = f"gpu-{nt.provider}-{idx:04d}"
        fleet.nodes.append(Node(idx, name, nt, workload, owner[workload], pricing, outages))

    _schedule(fleet, random.Random(f"jobs-{seed}"))
    return fleet


def up_segments(node: Node, minutes: int) -> list[tuple[int, int]]:
    """[start, end) minute ranges when the node's instance ran (complement of outages)."""
    segs, cur = [], 0
    for s, e in sorted(node.outages):
        if s > cur:
            segs.append((cur, s))
        cur = max(cur, e)
    if cur < minutes:
        segs.append((cur, minutes))
    return segs


USERS = ("alice", "bruno", "chen", "dara", "emil", "fatou", "gita", "hugo")


def _schedule(fleet: Fleet, rng: random.Random) -> None:
    """Slurm jobs per node slot: job, idle gap, job... inside each up-segment of the node."""
    job_id = 4_100_000 + (fleet.seed % 1000) * 1000
    jobs: list[Job] = []
    for node in fleet.nodes:
        shape = JOB_SHAPES.get(node.workload) or JOB_SHAPES["notebook"]
        size = node.type.gpus if shape.gpus == 0 else min(shape.gpus, node.type.gpus)
        busy_ratio = rng.uniform(0.70, 0.86)  # node-level utilisation target: idle 14-30 %
        for slot in range(node.type.gpus // size):
            gpu_idx = tuple(range(slot * size, (slot + 1) * size))
            segs = up_segments(node, fleet.minutes)
            for s, e in segs:
                ends_by_outage = e < fleet.minutes  # a segment ends early only when the instance is reclaimed
                t = s + rng.randrange(0, 45)
                while t < e - 10:
                    dur = int(rng.uniform(*shape.hours) * 60)
                    state, code = "COMPLETED", "0:0"
                    r = rng.random()
                    if r < 0.05:
                        dur, state, code = max(5, int(dur * rng.uniform(0.05, 0.6))), "FAILED", "1:0"
                    elif r < 0.065:
                        dur, state, code = max(5, int(dur * rng.uniform(0.1, 0.5))), "OUT_OF_MEMORY", "0:125"
                    elif r < 0.08:
                        dur, state, code = max(5, int(dur * rng.uniform(0.05, 0.9))), "CANCELLED", "0:15"
                    end = t + dur
                    if end >= e:
                        end = e
                        if ends_by_outage:
                            state, code = "PREEMPTED", "0:0"
                    util = rng.randint(*shape.util)
                    user = USERS[rng.randrange(len(USERS))] if shape.kind in ("training", "notebook") else f"svc-{node.team}"
                    submit = max(0, t - rng.randrange(0, 30))
                    jobs.append(Job(0, node.idx, gpu_idx, t, end, submit, state, code, node.workload,
                                    node.team, user, util))
                    gap = dur * (1 - busy_ratio) / busy_ratio * rng.uniform(0.6, 1.4)
                    t = end + max(2, int(gap))
    # Slurm numbers jobs in submission order.
    jobs.sort(key=lambda j: (j.submit, j.start, j.node, j.gpu_indices))
    for n, job in enumerate(jobs):
        job.job_id = job_id + n
    fleet.jobs = jobs
