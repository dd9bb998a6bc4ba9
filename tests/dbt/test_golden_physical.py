"""The physical-GPU golden ledger: the real pipeline on tests/golden_physical/inputs/, every row checked.

Three owned sites, one case each (docs/cost_model.md, "Physical GPUs"): (A) one H100 split into four MIG
slices, (B) two 8 x A100 Slurm nodes over two days, (C) four HAMi pods sharing one H100. Every expected
figure below is derived by hand in tests/golden_physical/EXPECTED.md (section letters and numbers in the
comments). GPU-hours are compared to 1e-6, money to the cent. The tests compare whole tables: a row too
many or too few fails as surely as a wrong figure.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from tests import golden_cases, prefetch
from tests.golden_cases import cents, dec, differences, rows

REPO = Path(__file__).resolve().parents[2]
INPUTS = REPO / "tests" / "golden_physical" / "inputs"
HOURS = Decimal("0.000001")  # hours are DECIMAL(38, 9): 1/7 slices summed hour by hour drift by ~1e-9
PCT = Decimal("0.00001")  # utilisation_pct is rounded to 6 places
JUNE = "2025-06-01"
H100, A100 = "H100-SXM-80GB", "A100-80GB"
MIG, OWN, K8S = "slurm:labmig", "slurm:labown", "kubernetes:(default)"


def build_golden_physical(root: Path) -> dict:
    """One refresh of tests/golden_physical/inputs into a fresh home (a tests/prefetch.py job)."""
    return golden_cases.refresh(root, INPUTS)


@pytest.fixture(scope="module")
def golden_physical_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("golden_physical", tmp_path_factory)


@pytest.fixture(scope="module")
def con(golden_physical_run: dict):
    with golden_cases.published(golden_physical_run) as con:
        yield con



def utc(value) -> datetime:
    """A timestamp as naive UTC (TIMESTAMP or TIMESTAMPTZ columns)."""
    return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value


def test_pools_per_day(con):
    # EXPECTED.md § 1 (and the per-case derivations A, B, C)
    cols = ["billed_gpu_hours", "allocated_gpu_hours", "used_gpu_hours", "measured_gpu_hours",
            "unallocated_gpu_hours", "underused_gpu_hours", "unmeasured_gpu_hours", "unobserved_gpu_hours",
            "idle_gpu_hours", "over_allocation_gpu_hours"]
    got_rows = rows(con, "select * from fct_gpu_idle_daily")
    got = {(r["pool_id"], r["gpu_model"], str(r["day"])): {c: r[c] for c in cols} for r in got_rows}
    v = lambda *x: dict(zip(cols, x))
    expected = {
        (MIG, H100, "2025-06-02"): v(24, 13, "6.3", 13, 11, "6.7", 0, 0, "17.7", 0),
        (OWN, A100, "2025-06-09"): v(384, 134, 56, 96, 250, 40, 38, 0, 290, 0),
        (OWN, A100, "2025-06-10"): v(384, 96, "47.6", 64, 288, "16.4", 32, 0, "304.4", 0),
        (K8S, H100, "2025-06-16"): v(24, 1, "0.8", 1, 23, "0.2", 0, 0, "23.2", 0),
    }
    assert differences(got, expected, HOURS) == []
    pct = {(r["pool_id"], r["gpu_model"], str(r["day"])): {"utilisation_pct": r["utilisation_pct"]} for r in got_rows}
    assert differences(pct, {
        (MIG, H100, "2025-06-02"): {"utilisation_pct": "48.461538"},  # 6.3 / 13
        (OWN, A100, "2025-06-09"): {"utilisation_pct": "58.333333"},  # 56 / 96
        (OWN, A100, "2025-06-10"): {"utilisation_pct": "74.375"},  # 47.6 / 64
        (K8S, H100, "2025-06-16"): {"utilisation_pct": "80"},
    }, PCT) == []
    # capacity pools: billed = allocated + unallocated, hour sums included
    for key, r in got.items():
        assert abs(dec(r["billed_gpu_hours"]) - dec(r["allocated_gpu_hours"]) - dec(r["unallocated_gpu_hours"])) <= HOURS, key


def test_teams_per_day(con):
    # EXPECTED.md § 2: capacity pools give each team what it held and the rest to '(unallocated)'
    cols = ["billed_gpu_hours", "allocated_gpu_hours", "used_gpu_hours", "measured_gpu_hours", "idle_gpu_hours",
            "unallocated_gpu_hours", "underused_gpu_hours", "unmeasured_gpu_hours", "unobserved_gpu_hours",
            "failed_job_gpu_hours", "cancelled_job_gpu_hours"]
    got_rows = rows(con, "select * from fct_gpu_utilisation_daily")
    key = lambda r: (str(r["day"]), r["team_id"], r["workload_id"], r["gpu_model"])
    got = {key(r): {c: r[c] for c in cols} for r in got_rows}
    v = lambda *x: dict(zip(cols, x))
    expected = {
        # A. MIG slices at compute slices / 7, each job read from its own labelled slice
        ("2025-06-02", "vision", None, H100): v(6, 6, "3.15", 6, "2.85", 0, "2.85", 0, 0, 0, 0),
        ("2025-06-02", "speech", None, H100): v(4, 4, "1.4", 4, "2.6", 0, "2.6", 0, 0, 0, 0),
        ("2025-06-02", "nlp", None, H100): v(3, 3, "1.75", 3, "1.25", 0, "1.25", 0, 0, 0, 0),
        ("2025-06-02", "(unallocated)", None, H100): v(11, 0, 0, 0, 11, 11, 0, 0, 0, 0, 0),
        # B. whole node read over the node; two nodes never share readings; partial jobs by label
        ("2025-06-09", "vision", "detector-train", A100): v(64, 64, 32, 64, 32, 0, 32, 0, 0, 0, 0),
        ("2025-06-09", "nlp", "llm-pretrain", A100): v(64, 64, 24, 32, 8, 0, 8, 32, 0, 0, 0),
        ("2025-06-09", "speech", "asr-train", A100): v(6, 6, 0, 0, 0, 0, 0, 6, 0, 6, 0),
        ("2025-06-09", "(unallocated)", None, A100): v(250, 0, 0, 0, 250, 250, 0, 0, 0, 0, 0),
        ("2025-06-10", "vision", "detector-train", A100): v(24, 24, "21.6", 24, "2.4", 0, "2.4", 0, 0, 0, 0),
        ("2025-06-10", "nlp", "llm-pretrain", A100): v(64, 64, 24, 32, 8, 0, 8, 32, 0, 0, 0),
        ("2025-06-10", "speech", "asr-train", A100): v(8, 8, 2, 8, 6, 0, 6, 0, 0, 0, 8),
        ("2025-06-10", "(unallocated)", None, A100): v(288, 0, 0, 0, 288, 288, 0, 0, 0, 0, 0),
        # C. HAMi shares at gpucores / 100, read from the node's one GPU
        ("2025-06-16", "vision", None, H100): v("0.25", "0.25", "0.2", "0.25", "0.05", 0, "0.05", 0, 0, 0, 0),
        ("2025-06-16", "speech", None, H100): v("0.25", "0.25", "0.2", "0.25", "0.05", 0, "0.05", 0, 0, 0, 0),
        ("2025-06-16", "nlp", None, H100): v("0.5", "0.5", "0.4", "0.5", "0.1", 0, "0.1", 0, 0, 0, 0),
        ("2025-06-16", "(unallocated)", None, H100): v(23, 0, 0, 0, 23, 23, 0, 0, 0, 0, 0),
    }
    assert differences(got, expected, HOURS) == []
    pct = {key(r): {"utilisation_pct": r["utilisation_pct"]} for r in got_rows}
    want_pct = {k: {"utilisation_pct": None} for k in expected}
    want_pct.update({k: {"utilisation_pct": p} for k, p in [
        (("2025-06-02", "vision", None, H100), "52.5"),
        (("2025-06-02", "speech", None, H100), "35"),
        (("2025-06-02", "nlp", None, H100), "58.333333"),
        (("2025-06-09", "vision", "detector-train", A100), "50"),
        (("2025-06-09", "nlp", "llm-pretrain", A100), "75"),
        (("2025-06-10", "vision", "detector-train", A100), "90"),
        (("2025-06-10", "nlp", "llm-pretrain", A100), "75"),
        (("2025-06-10", "speech", "asr-train", A100), "25"),
        (("2025-06-16", "vision", None, H100), "80"),
        (("2025-06-16", "speech", None, H100), "80"),
        (("2025-06-16", "nlp", None, H100), "80"),
    ]})
    assert differences(pct, want_pct, PCT) == []


def test_owned_capacity_daily(con):
    # EXPECTED.md § 3 and "Owned rates": H100 2.00, A100 1.50 USD per GPU-hour
    got_rows = rows(con, "select * from fct_owned_capacity_daily")
    key = lambda r: (r["site"], r["pool_id"], r["gpu_model"], str(r["day"]))
    hour_cols = ["capacity_gpu_hours", "allocated_gpu_hours", "unallocated_gpu_hours"]
    money_cols = ["rate_per_gpu_hour", "capacity_cost", "allocated_cost", "idle_cost"]
    expected = {
        ("site-mig", MIG, H100, "2025-06-02"): (24, 13, 11, "2.00", "48.00", "26.00", "22.00"),
        ("site-own", OWN, A100, "2025-06-09"): (384, 134, 250, "1.50", "576.00", "201.00", "375.00"),
        ("site-own", OWN, A100, "2025-06-10"): (384, 96, 288, "1.50", "576.00", "144.00", "432.00"),
        ("site-k8s", K8S, H100, "2025-06-16"): (24, 1, 23, "2.00", "48.00", "2.00", "46.00"),
    }
    got_hours = {key(r): {c: r[c] for c in hour_cols} for r in got_rows}
    assert differences(got_hours, {k: dict(zip(hour_cols, v[:3])) for k, v in expected.items()}, HOURS) == []
    got_money = {key(r): {c: cents(r[c]) for c in money_cols} for r in got_rows}
    assert got_money == {k: {c: cents(x) for c, x in zip(money_cols, v[3:])} for k, v in expected.items()}
    assert {r["currency"] for r in got_rows} == {"USD"}
    # the rate itself is exact, not only to the cent
    assert {key(r): dec(r["rate_per_gpu_hour"]) for r in got_rows} == {
        k: Decimal(v[3]) for k, v in expected.items()}
    # capacity_cost = allocated_cost + idle_cost on every row
    for r in got_rows:
        assert cents(r["capacity_cost"]) == cents(dec(r["allocated_cost"]) + dec(r["idle_cost"])), key(r)


def test_showback_owned_hardware(con):
    # EXPECTED.md § 4: the whole showback is owned hardware; each site's month sums to capacity x rate
    got = {}
    for r in rows(con, "select * from fct_showback_monthly"):
        k = (r["team_id"], str(r["period"]), r["currency"], r["component"], r["cost_basis"], r["source"],
             r["bridge_step"])
        got[k] = got.get(k, Decimal(0)) + dec(r["amount"])
    owned = ("owned-hardware", "owned hardware", "Owned hardware")
    expected = {
        ("vision", JUNE, "USD", "gpu_compute", *owned): "144.50",  # 12.00 + 132.00 + 0.50
        ("speech", JUNE, "USD", "gpu_compute", *owned): "20.50",  # 8.00 + 12.00 (cancelled 8005) + 0.50
        ("speech", JUNE, "USD", "failure_waste", *owned): "9.00",  # failed 8004: 6 x 1.50
        ("nlp", JUNE, "USD", "gpu_compute", *owned): "199.00",  # 6.00 + 192.00 + 1.00
        ("(idle)", JUNE, "USD", "idle_capacity", *owned): "875.00",  # 22.00 + 807.00 + 46.00
    }
    assert {k: cents(v) for k, v in got.items()} == {k: cents(v) for k, v in expected.items()}
    assert cents(sum(got.values())) == cents("1248.00")
    capacity = con.execute("select sum(capacity_cost) from fct_owned_capacity_daily").fetchone()[0]
    assert cents(capacity) == cents(sum(got.values()))


def test_physical_gpu_inventory(con):
    # EXPECTED.md § 5: one row per physical GPU, MIG slices and HAMi shares folded into their GPU
    got_rows = rows(con, "select * from dim_physical_gpu")
    got = {(r["pool_id"], r["host"], int(r["gpu_index"])): r for r in got_rows}
    assert len(got) == len(got_rows), "two rows for one pool, host and index"

    def gpu(site, model, sources, uuid, first, last, hours):
        return {"site": site, "gpu_model": model, "sources": sources, "gpu_uuid": uuid, "first_hour": first,
                "last_hour": last, "capacity_gpu_hours": hours}

    day = lambda d, h: datetime(2025, 6, d, h)
    both, sched = {"scontrol", "telemetry"}, {"scontrol"}
    expected = {(MIG, "mig01", 0): gpu("site-mig", H100, both, "GPU-a0000000-0000-4000-8000-000000000001",
                                       day(2, 0), day(2, 23), 24)}
    for i in range(8):
        expected[(OWN, "own1", i)] = gpu("site-own", A100, both, f"GPU-b0000000-0000-4000-8000-00000000001{i}",
                                         day(9, 0), day(10, 23), 48)
        expected[(OWN, "own2", i)] = gpu("site-own", A100, sched, None, day(9, 0), day(10, 23), 48)
    expected[(K8S, "k8s-gpu1", 0)] = gpu("site-k8s", H100, {"telemetry"}, "GPU-c0000000-0000-4000-8000-000000000001",
                                         day(16, 0), day(16, 23), 24)
    assert sorted(got) == sorted(expected)
    problems = []
    for k, want in expected.items():
        r = got[k]
        sources = r["sources"] if isinstance(r["sources"], list) else str(r["sources"]).replace(";", ",").split(",")
        have = {"site": r["site"], "gpu_model": r["gpu_model"], "sources": {s.strip() for s in sources if s.strip()},
                "gpu_uuid": r["gpu_uuid"], "first_hour": utc(r["first_hour"]), "last_hour": utc(r["last_hour"])}
        for column, value in have.items():
            if value != want[column]:
                problems.append(f"{k} {column}: got {value}, expected {want[column]}")
        if abs(dec(r["capacity_gpu_hours"]) - want["capacity_gpu_hours"]) > HOURS:
            problems.append(f"{k} capacity_gpu_hours: got {r['capacity_gpu_hours']}, expected {want['capacity_gpu_hours']}")
        # the id is pool|host|index (as text, or a hash of it)
        text = f"{k[0]}|{k[1]}|{k[2]}"
        if r["physical_gpu_id"] not in (text, hashlib.md5(text.encode()).hexdigest()):
            problems.append(f"{k} physical_gpu_id: got {r['physical_gpu_id']}, expected {text} (or its md5)")
    assert problems == []
    # 24 + 16 x 48 + 24 GPU-hours: the pools' capacity, counted once
    assert abs(sum(dec(r["capacity_gpu_hours"]) for r in got_rows) - 816) <= HOURS


def test_no_gpu_gives_more_than_24_hours_a_day(con):
    # EXPECTED.md § 1 and § 5: per GPU over the days it exists, and per pool-day over its GPUs
    for r in rows(con, "select * from dim_physical_gpu"):
        days = (utc(r["last_hour"]).date() - utc(r["first_hour"]).date()).days + 1
        assert dec(r["capacity_gpu_hours"]) <= 24 * days + HOURS, r
    gpus = {p: n for p, n in con.execute("select pool_id, count(*) from dim_physical_gpu group by pool_id").fetchall()}
    for r in rows(con, "select * from fct_gpu_idle_daily"):
        assert dec(r["billed_gpu_hours"]) <= 24 * gpus.get(r["pool_id"], 0) + HOURS, r
        assert abs(dec(r["over_allocation_gpu_hours"])) <= HOURS, r


def test_owned_idle_in_unit_costs(con) -> None:
    # EXPECTED.md § 6: the pool's June idle (807.00) spread over the workloads by allocated GPU-hours.
    idle = {r["workload_id"]: cents(r["amount"]) for r in rows(con, """
        select workload_id, sum(amount) as amount from fct_workload_cost_lines
        where component = 'idle_capacity' and source_kind = 'owned_idle' group by workload_id""")}
    assert idle == {"detector-train": Decimal("308.77"), "llm-pretrain": Decimal("449.11"),
                    "asr-train": Decimal("49.12")}
    unit = {r["workload_id"]: r for r in rows(con, """
        select workload_id, all_in_cost, accepted_outputs, effective_unit_cost from fct_workload_unit_cost
        where basis = 'production'""")}
    assert {w: cents(r["all_in_cost"]) for w, r in unit.items()} == {
        "detector-train": Decimal("440.77"), "llm-pretrain": Decimal("641.11"), "asr-train": Decimal("70.12")}
    assert all(r["effective_unit_cost"] is None for r in unit.values())
    # The showback does not add it a second time: owned hardware in June is still capacity x rate.
    total = con.execute("select sum(amount) from fct_showback_monthly where source = 'owned hardware'").fetchone()[0]
    assert cents(total) == Decimal("1248.00")
