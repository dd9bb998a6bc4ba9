"""The synthetic inputs generator (tools/generate): reproducible, parseable, consistent."""

from __future__ import annotations

import hashlib
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from sources.catalog import FAMILIES, formats_for, recognise
from tools.generate import generate

# 40 GPUs is the smallest fleet whose nodes run a training, an eval, a media and an LLM-serving
# workload, so every format is produced; determinism is checked on a smaller 8 x 2 fleet.
GPUS, DAYS, TEAMS = 40, 2, 5

# File name prefix -> the format it must be recognised as.
EXPECTED = {
    "focus_": "focus", "invoice_totals": "invoice_totals_csv", "dcgm_": "dcgm_csv", "sacct_": "slurm_sacct",
    "litellm_spend_logs_": "litellm_spend_logs_csv", "karpenter_aws": "karpenter_aws_pricing_history",
    "karpenter_azure": "karpenter_azure_pricing_history", "teams.yaml": "registry_yaml",
    "workloads.yaml": "registry_yaml", "training_runs": "own_training_runs", "eval_runs": "own_eval_runs",
    "media_batches": "own_media_batches", "quality_outcomes": "own_quality_outcomes",
    "eurofxref-hist": "ecb_reference_rates",
}


def _expected(path: Path) -> str:
    if path.name.endswith(".commands.json"):
        return "vllm_run_commands"
    if path.suffix == ".json":
        return "vllm_serving_result"
    return next(fmt for prefix, fmt in EXPECTED.items() if path.name.startswith(prefix))


def _digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> tuple[Path, dict[str, int]]:
    out = tmp_path_factory.mktemp("gen") / "inputs"
    return out, generate(out, gpus=GPUS, days=DAYS, teams=TEAMS, seed=7)


def test_every_family_is_written(generated):
    out, counts = generated
    assert {p.name for p in out.iterdir()} == set(FAMILIES)
    assert all(v > 0 for v in counts.values()), counts
    formats = {recognise(p, fam).name for fam in FAMILIES for p in (out / fam).iterdir()}
    assert set(EXPECTED.values()) | {"vllm_serving_result", "vllm_run_commands"} <= formats


def test_same_seed_same_bytes_other_seed_differs(tmp_path):
    out, again, other = tmp_path / "one", tmp_path / "again", tmp_path / "other"
    generate(out, gpus=8, days=2, teams=4, seed=3)
    generate(again, gpus=8, days=2, teams=4, seed=3)
    assert _digests(again) == _digests(out)
    generate(other, gpus=8, days=2, teams=4, seed=4)
    a, b = _digests(out), _digests(other)
    assert any(a[k] != b.get(k) for k in a)


def test_every_file_is_recognised_by_its_format_and_parses_without_rejects(generated):
    out, _ = generated
    for family in FAMILIES:
        for path in sorted((out / family).iterdir()):
            fmt = recognise(path, family)
            assert fmt is not None, path
            assert fmt.name == _expected(path), (path, fmt.name)
            # No other family claims the file.
            others = [f.name for fam in FAMILIES if fam != family for f in formats_for(fam)
                      if f.detect(path, path.read_bytes()[:65536])]
            assert not others, (path, others)
            parsed = fmt.parse(path)
            assert parsed.rejects == [], (path, parsed.rejects[:3])
            assert parsed.row_count() > 0, path


def test_invoice_totals_equal_focus_sums(generated):
    out, _ = generated
    con = duckdb.connect()
    sums = {
        (inv, acct, str(period)[:10], cur): Decimal(str(total))
        for inv, acct, period, cur, total in con.execute(
            f"""select InvoiceId, BillingAccountId, BillingPeriodStart, BillingCurrency, sum(BilledCost)
                from read_csv('{out}/billing/focus_*.csv', header=true, types={{'BilledCost': 'DECIMAL(38,12)',
                     'BillingPeriodStart': 'VARCHAR'}})
                group by all""").fetchall()
    }
    invoices = {
        (inv, acct, period, cur): Decimal(total)
        for inv, acct, period, cur, total in con.execute(
            f"select * from read_csv('{out}/billing/invoice_totals.csv', header=true, all_varchar=true)").fetchall()
    }
    assert invoices == sums


def test_slurm_gpu_hours_never_exceed_billed_gpu_hours(generated):
    out, _ = generated
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    billed = dict(con.execute(
        f"""select cast(ChargePeriodStart as date), sum(cast(ConsumedQuantity as double) * cast(x_GpuCount as integer))
            from read_csv('{out}/billing/focus_*.csv', header=true, all_varchar=true)
            where ServiceCategory = 'Compute' and ChargeCategory = 'Usage' and x_GpuCount is not null
            group by 1""").fetchall())
    jobs = []
    for path in sorted((out / "usage").glob("sacct_*.txt")):
        t = recognise(path, "usage").parse(path).tables["gpu_jobs"]
        jobs += zip(t["started_at"].to_pylist(), t["ended_at"].to_pylist(), t["gpu_count"].to_pylist())
    assert jobs
    used: dict = {}
    for start, end, gpus in jobs:
        cur = start
        while cur < end:
            day_end = cur.replace(hour=0, minute=0, second=0) + __import__("datetime").timedelta(days=1)
            piece = min(end, day_end) - cur
            used[cur.date()] = used.get(cur.date(), 0.0) + piece.total_seconds() / 3600 * gpus
            cur = min(end, day_end)
    assert set(used) <= set(billed)
    for day, hours in used.items():
        idle = 1 - hours / billed[day]
        assert 0 <= idle < 0.6, (day, hours, billed[day])
    total_idle = 1 - sum(used.values()) / sum(billed.values())
    assert 0.10 <= total_idle <= 0.35, total_idle
