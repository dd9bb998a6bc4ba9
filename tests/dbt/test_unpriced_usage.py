"""Off-bill usage is priced or loudly unpriced, on a hand-made inputs folder (tests/fixtures/usage/).

Inputs: the sample registry with its owned_hardware policy replaced, a usage_providers policy and a
Slurm account mapping; a sacct dump of five jobs (times UTC); a Karpenter AWS price history with two
prices for p4de.24xlarge (8 x A100-80GB). Figures worked out by hand:

- job 1001, cluster `rented` (usage_providers: aws, on-demand), 2 x A100 (gres `a100` = A100-80GB)
  from 2024-03-10 10:00 to 13:00 = 2 x 3 h = 6 GPU-hours. The price valid that day is the
  2024-01-01 commit: 32.00 / 8 GPUs = 4.00 per GPU-hour -> 6 x 4.00 = 24.00 USD, list-priced.
- job 1002, `rented`, 4 x A100 on 2024-07-01 10:00-11:30 = 4 x 1.5 = 6 GPU-hours. The price then is
  the 2024-06-01 commit: 24.00 / 8 = 3.00 -> 6 x 3.00 = 18.00 USD, list-priced.
- job 2001, cluster `onprem` (owned_hardware site `lab`), 1 x V100 (V100-32GB) 2024-03-10
  00:00-10:00 = 10 GPU-hours. Owned-hardware rate per GPU-hour:
      capex      8,760 / (12 months x 730 h)  = 8,760 / 8,760 = 1.00
      power      0.5 kW x pue 1.2 x 0.25 /kWh = 0.15
      operations ops_per_gpu_hour             = 0.35
      rate                                    = 1.50 USD -> 10 x 1.50 = 15.00 USD, owned-hardware.
- job 1003, `rented`, 1 x L4 (L4-24GB) 2024-03-11 08:00-10:00 = 2 GPU-hours; the price file has
  no L4: unpriced, reason 'no observed USD price for L4-24GB', amount NULL (not 0).
- job 3001, cluster `mystery` (no bill line, no site, no usage_providers entry), 1 x A100 1 h:
  unpriced, reason 'no provider: slurm:mystery ...', amount NULL.
No bill line exists, so every allocated GPU-hour (6 + 6 + 10 + 2 + 1 = 25) is in fct_off_bill_usage, and
fct_unpriced_usage holds only the unpriced 2 + 1 = 3 of them.
"""

from __future__ import annotations

import re
import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from tests import prefetch

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples" / "inputs"
FIXTURES = REPO / "tests" / "fixtures" / "usage"

OWNED_POLICY = """  owned_hardware:
    currency: USD
    amortisation_months: 12
    electricity_per_kwh: 0.25
    pue: 1.2
    ops_per_gpu_hour: 0.35
    capex_per_gpu: {V100-32GB: 8760}
    power_kw_per_gpu: {V100-32GB: 0.5}
    sites:
      - {site: lab, match: ["slurm:onprem"]}
  usage_providers:
    - {match: ["slurm:rented"], provider: aws, pricing_category: on-demand}

mappings:
  - {kind: slurm_account, match: "ml", team: research, workload: llm-pretrain-7b}
"""


def _inputs(root: Path) -> Path:
    inputs = root / "inputs"
    (inputs / "registry").mkdir(parents=True)
    shutil.copy(SAMPLES / "registry" / "workloads.yaml", inputs / "registry" / "workloads.yaml")
    teams = (SAMPLES / "registry" / "teams.yaml").read_text()
    # Replace the sample's owned_hardware policy (and everything after it: its mappings) with ours.
    head = teams[: teams.index("  # Owning hardware")]
    (inputs / "registry" / "teams.yaml").write_text(head + OWNED_POLICY)
    (inputs / "usage").mkdir()
    shutil.copy(FIXTURES / "unpriced_sacct.txt", inputs / "usage" / "unpriced_sacct.txt")
    (inputs / "prices").mkdir()
    shutil.copy(FIXTURES / "unpriced_prices_karpenter_aws.csv", inputs / "prices" / "karpenter_aws_history.csv")
    return inputs


def build_unpriced(root: Path) -> dict:
    """One refresh of this module's inputs into a fresh home (a tests/prefetch.py job)."""
    from pipelines.cli import execute_refresh

    ok, _run_id, reason = execute_refresh(root / "home", _inputs(root), docs=False)
    return {"root": root, "ok": ok, "reason": reason}


@pytest.fixture(scope="module")
def unpriced_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("unpriced", tmp_path_factory)


@pytest.fixture(scope="module")
def run(unpriced_run: dict):
    root = unpriced_run["root"]
    assert unpriced_run["ok"], unpriced_run["reason"]
    con = duckdb.connect(str(root / "home" / "serving.duckdb"), read_only=True)
    ledger = duckdb.connect(str(root / "home" / "ledger.duckdb"), read_only=True)
    yield {"con": con, "ledger": ledger, "home": root / "home"}
    con.close()
    ledger.close()


def _rows(con, sql: str) -> list[dict]:
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def _by_day(run) -> dict:
    rows = _rows(run["con"], "select * from fct_off_bill_usage")
    return {(str(r["day"]), r["gpu_model"]): r for r in rows}


def test_list_priced_at_the_price_of_the_day(run):
    rows = _by_day(run)
    march = rows[("2024-03-10", "A100-80GB")]
    assert march["pricing_status"] == "list-priced" and march["source_kind"] == "slurm_job"
    assert march["gpu_hours"] == pytest.approx(6.0)
    assert march["rate_per_gpu_hour"] == Decimal("4")  # 32.00 / 8 GPUs
    assert march["amount"] == Decimal("24")  # 6 GPU-h x 4.00
    assert march["currency"] == "USD" and march["reason"] is None
    assert march["provider"] == "aws" and march["team_id"] == "research"
    assert "p4de.24xlarge" in march["price_source"] and march["price_observed_at"] is not None
    july = rows[("2024-07-01", "A100-80GB")]
    assert july["rate_per_gpu_hour"] == Decimal("3")  # 24.00 / 8, the 2024-06-01 price
    assert july["amount"] == Decimal("18")  # 6 GPU-h x 3.00


def test_owned_hardware_rate(run):
    row = _by_day(run)[("2024-03-10", "V100-32GB")]
    assert row["pricing_status"] == "owned-hardware" and row["site"] == "lab" and row["provider"] is None
    # 8760 / (12 x 730) + 0.5 x 1.2 x 0.25 + 0.35 = 1.00 + 0.15 + 0.35 = 1.50
    assert row["rate_per_gpu_hour"] == pytest.approx(Decimal("1.5"), abs=Decimal("1e-9"))
    assert row["gpu_hours"] == pytest.approx(10.0)
    assert row["amount"] == pytest.approx(Decimal("15"), abs=Decimal("1e-8"))  # 10 GPU-h x 1.50
    assert row["currency"] == "USD" and row["price_source"] == "owned_hardware policy, site lab"
    # No scontrol node and no telemetry says how many GPUs lab has: only the 10 allocated GPU-hours are
    # priced (no idle can be), and the site says so instead of showing a capacity it cannot know.
    site = _rows(run["con"], "select * from fct_owned_capacity_daily where site = 'lab'")
    assert [(r["capacity_basis"], r["capacity_gpu_hours"], r["allocated_gpu_hours"], r["unallocated_gpu_hours"])
            for r in site] == [("allocated only (no inventory)", None, 10, None)]
    assert site[0]["allocated_cost"] == pytest.approx(Decimal("15"), abs=Decimal("1e-8"))
    assert site[0]["capacity_cost"] is None and site[0]["idle_cost"] is None


def test_no_price_and_no_provider_are_listed_with_reason_and_null_amount(run):
    rows = _by_day(run)
    l4 = rows[("2024-03-11", "L4-24GB")]
    assert l4["pricing_status"] == "unpriced"
    assert l4["reason"] == "no observed USD price for L4-24GB"
    assert l4["gpu_hours"] == pytest.approx(2.0)
    assert l4["amount"] is None and l4["rate_per_gpu_hour"] is None and l4["currency"] is None
    mystery = rows[("2024-03-12", "A100-80GB")]
    assert mystery["pricing_status"] == "unpriced" and mystery["amount"] is None
    assert re.match(r"^no provider: slurm:mystery ", mystery["reason"])


def test_every_gpu_hour_once_and_priced_work_reaches_cost_lines_labelled(run):
    total, = run["con"].execute("select sum(gpu_hours) from fct_off_bill_usage").fetchone()
    assert total == pytest.approx(6 + 6 + 10 + 2 + 1)
    unpriced = run["con"].execute("select pricing_status, sum(gpu_hours) from fct_unpriced_usage group by 1").fetchall()
    assert unpriced == [("unpriced", pytest.approx(2 + 1))]
    ledger = run["ledger"]
    lines = _rows(ledger, "select source_kind, component, amount, detail from intermediate.int_workload_cost_lines "
                          "where source_kind = 'slurm_job' order by amount")
    # 18.00 (July) and 24.00 (March) list-priced, 15.00 owned; the unpriced L4 job has no line
    assert [round(line["amount"], 6) for line in lines] == [Decimal("15"), Decimal("18"), Decimal("24")]
    assert lines[0]["detail"].startswith("owned-hardware: ")
    assert all(line["detail"].startswith("list-priced: ") for line in lines[1:])


def test_unpriced_rows_reported_as_a_warning(run):
    checks = {c["check_name"]: c for c in _rows(run["con"], "select * from check_results")}
    warn = checks["assert_unpriced_gpu_hours_exist"]
    # the L4 job and the job on `mystery`: 2 unpriced rows, a warning, not a failure
    assert (warn["severity"], warn["status"]) == ("warn", "warn")
    assert warn["detail"] == "GPU-hours nobody could price: 2 reasons"
    for name in ("assert_unpriced_usage_amounts_consistent", "assert_usage_gpu_hours_counted_once"):
        assert (checks[name]["severity"], checks[name]["status"]) == ("error", "pass"), checks[name]
