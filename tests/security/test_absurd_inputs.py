"""A copy of the samples plus one absurd file per family refreshes and publishes.

Before the gates (docs/sources/plausibility.md), such files either published absurd figures (a
LiteLLM request of USD 999,999,999.12 with no tokens in the research chargeback, a 1e12 OpenAI cost
bucket, a 1e12 quote, a g5.xlarge at 999.99 USD/h, an eval run on 10,000 GPUs, a 1e9 GPU-hour media
batch, a sacct job with gres/gpu=10000 on one node) or stopped the publication (DCGM utilisation of
5000 % and -40 %, a registry that defines a team twice or puts a workload on an unknown team).

Now each hostile row is quarantined at load with the bound it broke and named in the published
dq_rejects, every sample row still publishes, and no published figure exceeds its bound. The
hostile files are the bad-input catalogue's (tests/bad_inputs/, made by make_catalogue.py); their
good rows have ids of their own, so they sit beside the samples without duplicating one.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from tests import prefetch
from tests.conftest import SAMPLES

pytestmark = pytest.mark.e2e

CATALOGUE = Path(__file__).resolve().parent.parent / "bad_inputs"

#: family / file -> the (rule, line) of every row it must lose (the same as expected.yaml says)
HOSTILE: dict[tuple[str, str], list[tuple[str, int]]] = {
    ("billing", "focus_quadrillion.csv"): [("implausible_amount", 2)],
    ("api_spend", "litellm_absurd_spend.csv"): [("implausible_amount", 3), ("implausible_amount", 4),
                                                ("implausible_unit_price", 5)],
    ("api_spend", "openai_costs_absurd_bucket.json"): [("implausible_amount", 2)],
    ("prices", "karpenter_absurd_per_gpu.csv"): [("implausible_price", 4)],
    ("prices", "quotes_absurd.csv"): [("implausible_price", 3)],
    ("benchmarks", "eval_runs_absurd.csv"): [("implausible_run", 3), ("implausible_run", 4)],
    ("benchmarks", "media_batches_absurd.csv"): [("implausible_run", 3)],
    ("usage", "dcgm_absurd_utilisation.csv"): [("implausible_usage", 3), ("implausible_usage", 4)],
    ("usage", "sacct_absurd_gpus.txt"): [("implausible_usage", 2)],
    ("registry", "workloads_conflicts.yaml"): [
        ("registry_duplicate_team", 3), ("registry_duplicate_team", 7), ("registry_duplicate_workload", 10),
        ("registry_unknown_team", 14), ("invalid_workload_type", 21), ("registry_duplicate_policy", 27)],
}


def build_absurd_run(root: Path) -> dict:
    """One refresh of the samples plus the hostile files (a tests/prefetch.py job)."""
    from pipelines.cli import execute_refresh

    inputs = root / "inputs"
    shutil.copytree(SAMPLES, inputs)  # copy2: the samples keep their times, so they landed "first"
    for family, name in HOSTILE:
        shutil.copyfile(CATALOGUE / family / name, inputs / family / name)
    ok, _, reason = execute_refresh(root / "home", inputs, docs=False)
    return {"ok": ok, "reason": reason, "serving": root / "home" / "serving.duckdb"}


@pytest.fixture(scope="module")
def absurd_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The refresh of `build_absurd_run`; its published copy is opened read-only by each test."""
    return prefetch.result("absurd_run", tmp_path_factory)


def _query(run: dict, sql: str) -> list[tuple]:
    con = duckdb.connect(str(run["serving"]), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_the_refresh_publishes(absurd_run: dict) -> None:
    assert absurd_run["ok"], absurd_run["reason"]


def test_every_hostile_row_is_named_in_the_published_rejects(absurd_run: dict) -> None:
    rows = _query(absurd_run, "select source_family, file_name, rule, line, message from dq_rejects")
    got: dict[tuple[str, str], list[tuple[str, int]]] = {}
    for family, name, rule, line, _ in rows:
        if (family, name) in HOSTILE:
            got.setdefault((family, name), []).append((rule, line))
    assert {k: sorted(v, key=lambda r: r[1]) for k, v in got.items()} == HOSTILE
    messages = {(name, line): msg for _, name, _, line, msg in rows}
    # the reject names the figure and the bound it broke
    assert "gpu_util_pct = 5,000" in messages[("dcgm_absurd_utilisation.csv", 3)]
    assert "bound 100" in messages[("dcgm_absurd_utilisation.csv", 3)]
    assert "price = 999.99" in messages[("karpenter_absurd_per_gpu.csv", 4)]
    assert "instance catalogue" in messages[("karpenter_absurd_per_gpu.csv", 4)]
    assert "already defined at teams.yaml" in messages[("workloads_conflicts.yaml", 3)]
    assert "ghost-team" in messages[("workloads_conflicts.yaml", 14)]


def test_no_published_figure_exceeds_its_bound(absurd_run: dict) -> None:
    """Per figure: the bounds of reference/bounds.py PLAUSIBILITY."""
    [(quote, history)] = _query(absurd_run, "select (select max(price_per_gpu_hour) from fct_price_quotes), "
                                             "(select max(price_per_gpu_hour) from fct_gpu_price_history)")
    assert quote <= 100 and history <= 100  # max_per_gpu_hour
    [(cost_day,)] = _query(absurd_run, "select max(abs(cost)) from fct_api_cost_reports_daily")
    assert cost_day <= 10_000_000  # max_api_bucket_per_day
    [(eval_gpus, eval_hours)] = _query(absurd_run, "select max(gpu_count), max(wall_hours) from fct_eval_runs")
    assert eval_gpus <= 1024 and eval_hours < 24  # the sample eval runs last 1-4 hours
    [(media_hours,)] = _query(absurd_run, "select max(gpu_hours / (gpu_count * (epoch(ended_at) - epoch(started_at)) "
                                          "/ 3600.0)) from fct_media_batches")
    assert media_hours <= 1.01 + 0.01  # GPU-hours over GPUs x own span: at most 1 (+ the slack)
    [(util,)] = _query(absurd_run, "select max(utilisation_pct) from fct_gpu_utilisation_daily")
    assert util <= 100
    [(job_gpus,)] = _query(absurd_run, "select max(gpu_count) from fct_gpu_failed_jobs")
    assert job_gpus <= 16  # max_gpus_per_node: the sample jobs run on one node (2 GPUs at most)
    [(research,)] = _query(absurd_run, "select max(total_cost) from fct_chargeback_monthly where team_id = 'research'")
    assert research < 1_000_000  # the 999,999,999.12 USD request is not in it


def test_no_published_number_is_absurd(absurd_run: dict) -> None:
    """Every numeric column of every published table stays under 1e8: the samples' largest published
    figure is 62,181,450 (fct_candidate_comparison.accepted_outputs); the hostile figures were 1e9-1e12."""
    cols = _query(absurd_run, "select table_name, column_name from information_schema.columns where data_type "
                              "like 'DECIMAL%' or data_type in ('DOUBLE', 'FLOAT', 'BIGINT', 'INTEGER', 'HUGEINT')")
    sql = " union all ".join(f"select '{t}.{c}', max(abs(\"{c}\"))::double from \"{t}\"" for t, c in cols)
    over = [(name, v) for name, v in _query(absurd_run, f"select * from ({sql}) where 2 > 1")
            if v is not None and v >= 1e8]
    assert over == []


def test_the_registry_keeps_the_first_definitions(absurd_run: dict) -> None:
    teams = dict(_query(absurd_run, "select team_id, name from dim_team"))
    assert teams["research"] == "Foundation Research"  # not "Someone else's research team"
    assert "hostile-lab" in teams and "ghost-team" not in teams
    workloads = dict(_query(absurd_run, "select workload_id, team_id from dim_workload"))
    assert workloads["chat-assistant-70b"] == "support"  # the bundled definition stands
    assert workloads["hostile-lab-evals"] == "hostile-lab"
    assert "ghost-workload" not in workloads and "quantum-workload" not in workloads
