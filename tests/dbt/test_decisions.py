"""Stage-4 decisions on the bundled samples: one monthly horizon for today and every candidate,
today's own shape as a back-test, measured runs before projections, whole rentable instances,
memory fit at the request shape split over replicas, gates with their targets, evidence grades,
exact money, and a ranked candidate (or the benchmark to run) for every workload. Expected figures
are worked out by hand from the sample inputs:

- One horizon: chat-assistant-70b's quality-filter export has accepted outputs on 2 days of April
  (36,988 on the 14th, 36,310 on the 15th = 73,298); April has 30 days, so demand = 73,298 / 2 x 30 =
  1,099,470 a month and today's run-rate = its April all-in cost x 15. Every candidate is sized to
  and priced for that month (720 h): no more 3 active days against 730 billed hours.
- Back-test: production runs 2 x Azure Standard_ND96asr_v4 (8x A100-40GB each) billed 652.728 a day
  each = 27.197 an instance-hour (EffectiveCost / instance-hours). Priced by the model: 2 x 27.197 x
  720 = 39,163.68 against today's compute lines 2,610.912 + 0.048506 (API) = 2,610.960506 x 15 =
  39,164.41: within 15 % (the gap is the API lines). Each replica (one instance) holds 64 / 2 = 32
  sessions: Llama-3.3-70B bf16 at the request shape (900 p95 input + 190 output = 1,090 tokens x
  327,680 B = 0.357 GB a session) needs 141.2 + 0.357 x 32 + 16 + 32 = 200.63 of 320 GB -> 37.3 %,
  which passes (at full 8k context and all 64 sessions on one replica it was -12.8 %).
- Measured beats projected: chat's vLLM runs are on 8x A100-40GB, so aws p4d.24xlarge (8x A100-40GB)
  uses run vllm-c16c337199ba74fa itself (evidence measured) and gcp's 1x A100-40GB is same_gpu.
- Whole instances: DigitalOcean gpu-mi300x8-1536gb is an 8x MI300X droplet at 15.92 USD/h: 1 x 15.92
  x 720 = 11,462.40 a month however little of it the model needs.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
import yaml

from reporting.decisions import write_decision_record
from tests.conftest import SAMPLES

pytestmark = pytest.mark.e2e
CHAT = "chat-assistant-70b"
MI300X = "digitalocean gpu-mi300x8-1536gb (8x MI300X-192GB) x1"
MONEY_COLUMNS = ("price_per_instance_hour", "gpu_cost", "storage_network", "platform_labor", "failure_loss",
                 "monthly_cost", "today_monthly_cost", "monthly_savings")


@pytest.fixture(scope="module")
def home(sample_run: dict) -> Path:
    assert sample_run["ok"], sample_run["reason"]
    return sample_run["home"]


def _rows(home: Path, sql: str) -> list[dict]:
    con = duckdb.connect(str(home / "serving.duckdb"), read_only=True)
    try:
        cur = con.execute(sql)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur.fetchall()]
    finally:
        con.close()


def _workloads() -> list[dict]:
    return yaml.safe_load((SAMPLES / "registry" / "workloads.yaml").read_text())["workloads"]


def _today(home: Path, workload: str) -> dict:
    return _rows(home, f"select * from fct_workload_unit_cost where workload_id = '{workload}' "
                       "and basis = 'production' and currency = 'USD' order by period desc limit 1")[0]


def test_today_and_candidates_share_one_month_of_demand(home: Path) -> None:
    rows = _rows(home, f"select * from fct_candidate_comparison where workload_id = '{CHAT}'")
    today = _today(home, CHAT)
    current = next(r for r in rows if r["route_kind"] == "current")
    assert (current["days_observed"], current["days_in_month"]) == (2, 30)
    assert current["accepted_outputs"] == 73298 / 2 * 30 == 1099470
    assert current["monthly_cost"] == (today["all_in_cost"] * 15).quantize(Decimal("0.000001"))
    assert "x 30/2" in current["demand_extrapolation"]
    assert {r["accepted_outputs"] for r in rows if r["route_kind"] != "missing_evidence"} == {1099470}
    assert {float(r["billed_hours"]) for r in rows if r["route_kind"] in ("gpu", "today_shape")} == {720.0}


def test_a_costlier_candidate_is_never_eligible_or_ranked(home: Path) -> None:
    rows = _rows(home, "select * from fct_candidate_comparison where route_kind in ('gpu', 'api', 'today_shape')")
    for r in rows:
        assert r["monthly_savings"] == r["today_monthly_cost"] - r["monthly_cost"]
        if r["monthly_cost"] >= r["today_monthly_cost"]:
            assert not r["eligible"] and r["rank"] is None, r["candidate"]
            assert r["status"] in ("costs more", "costs more, pending evidence", "ineligible", "back-test")
        if r["eligible"]:
            assert r["monthly_savings"] > 0 and r["rank"] is not None and r["status"] == "eligible"
    assert any(r["status"] == "costs more" for r in rows)  # listed, labelled, not chosen


def test_back_test_todays_own_shape_within_15_percent(home: Path) -> None:
    shape = _rows(home, f"select * from fct_candidate_comparison where workload_id = '{CHAT}' "
                        "and route_kind = 'today_shape'")
    assert len(shape) == 1
    r = shape[0]
    assert (r["provider"], r["instance_type"].lower(), r["instances"], r["gpu_model"], r["gpus_per_instance"]) == \
        ("azure", "standard_nd96asr_v4", 2, "A100-40GB", 8)
    assert r["price_per_instance_hour"] == Decimal("27.197")
    assert r["gpu_cost"] == Decimal("39163.68")  # 2 x 27.197 x 720
    assert r["sessions_per_replica"] == 32 and r["memory_margin_pct"] == 37.3 and r["memory_gate"] == "pass"
    assert r["evidence"] == "measured" and r["latency_gate"] == "pass"
    assert abs(r["backtest_gap_pct"]) <= 15
    assert abs(r["monthly_cost"] - r["today_monthly_cost"]) <= Decimal("0.15") * r["today_monthly_cost"]
    assert abs(r["effective_unit_cost"] - r["today_unit_cost"]) <= Decimal("0.15") * r["today_unit_cost"]
    assert r["backtest_gap_source"].startswith("compute: predicted 39163.68")
    assert r["status"] == "back-test" and not r["eligible"]
    # every workload billed by instance gets its back-test row
    shapes = {r["workload_id"] for r in _rows(home, "select workload_id from fct_candidate_comparison "
                                                    "where route_kind = 'today_shape'")}
    assert {"chat-assistant-70b", "batch-summarise-70b", "search-embed"} <= shapes


def test_measured_runs_beat_projection(home: Path) -> None:
    a100 = {r["candidate"]: r for r in _rows(home, f"select * from fct_candidate_comparison where workload_id = '{CHAT}' "
                                                   "and route_kind = 'gpu' and gpu_model = 'A100-40GB'")}
    p4d = a100["aws p4d.24xlarge (8x A100-40GB) x1"]
    assert p4d["evidence"] == "measured" and "vllm-c16c337199ba74fa" in p4d["notes"] and p4d["evidence_to_run"] is None
    run = _rows(home, "select * from fct_benchmark_runs where run_id = 'vllm-c16c337199ba74fa'")[0]
    # the run's own latency, not a projection
    assert (p4d["ttft_ms_p95"], p4d["tpot_ms_p95"]) == (round(run["ttft_ms_p95"], 1), round(run["tpot_ms_p95"], 1))
    single = next(r for c, r in a100.items() if "(1x A100-40GB)" in c)
    assert single["evidence"] == "same_gpu" and "1x A100-40GB" in single["evidence_to_run"]
    projected = _rows(home, f"select * from fct_candidate_comparison where workload_id = '{CHAT}' and evidence = 'projected'")
    assert projected and all(r["gpu_model"] != "A100-40GB" for r in projected)
    assert all(r["evidence_to_run"] for r in projected)


def test_an_8_gpu_offer_is_priced_as_a_whole_instance(home: Path) -> None:
    row = _rows(home, f"select * from fct_candidate_comparison where workload_id = '{CHAT}' and candidate = '{MI300X}'")
    assert len(row) == 1
    r = row[0]
    assert (r["instances"], r["gpus_per_instance"], r["gpu_count"]) == (1, 8, 8)
    assert r["price_per_instance_hour"] == Decimal("15.92")
    assert r["gpu_cost"] == Decimal("11462.40")  # 1 x 15.92 x 720


def test_single_gpu_vms_cannot_form_a_tensor_parallel_group(home: Path) -> None:
    single = _rows(home, f"select * from fct_candidate_comparison where workload_id = '{CHAT}' "
                         "and route_kind = 'gpu' and gpus_per_instance = 1")
    assert single, "single-GPU offers are listed (and ruled out), not dropped"
    assert all(r["intra_node_interconnect"] == "none (single GPU)" for r in single)
    assert not any(r["eligible"] for r in single)
    l40s = next(r for r in single if r["instance_type"] == "g6e.xlarge")
    assert l40s["memory_gate"] == "fail" and "memory margin" in l40s["failed_gate"]


def test_memory_fit_at_the_request_shape(home: Path) -> None:
    fit = {(r["gpu_model"], r["gpu_count"], r["concurrency"]): r for r in _rows(
        home, f"select * from fct_memory_fit where workload_id = '{CHAT}'")}
    one = fit[("H100-SXM-80GB", 2, 1)]
    assert one["kv_tokens_per_session"] == 1090  # 900 p95 input + 190 output, under the 8,192 window
    assert (one["required_gb"], one["margin_pct"], one["fit_status"]) == (pytest.approx(161.56), -1.0, "does not fit")
    four = fit[("H100-SXM-80GB", 4, 64)]
    assert (four["required_gb"], four["margin_pct"], four["fit_status"]) == (pytest.approx(204.06), 36.2, "fits")
    assert fit[("A100-40GB", 8, 64)]["margin_pct"] == 33.7


def test_no_ranked_gpu_candidate_is_under_the_memory_threshold(home: Path) -> None:
    bad = _rows(home, "select * from fct_candidate_comparison where route_kind = 'gpu' and rank is not null "
                      "and (memory_margin_pct is null or memory_margin_pct < 15)")
    assert bad == []
    unranked = _rows(home, "select * from fct_candidate_comparison where route_kind in ('gpu', 'api') "
                           "and rank is null and status <> 'costs more'")
    assert unranked and all(r["failed_gate"] for r in unranked)


def test_evidence_gaps_are_priced_and_failed_gates_show_their_target(home: Path) -> None:
    api = {r["candidate"]: r for r in _rows(
        home, f"select * from fct_candidate_comparison where workload_id = '{CHAT}' and route_kind = 'api'")}
    together = next(r for c, r in api.items() if "together-ai-41.1b-80b" in c)
    assert together["candidate"].startswith("API together_ai meta-llama/Llama-3.3-70B-Instruct (price tier")
    assert together["evidence"] == "analogue"  # its latency comes from a Llama-2-70B llmperf run
    assert together["status"] == "eligible pending evidence" and together["monthly_savings"] > 0
    assert "TPOT not measured (target 120" in together["failed_gate"] and together["evidence_to_run"].startswith("llmperf")
    assert together["slo_tpot_ms"] == 120 and together["slo_ttft_ms"] == 3000
    groq = next(r for c, r in api.items() if c.startswith("API groq"))
    assert groq["status"] == "eligible pending evidence" and groq["evidence_to_run"]
    failed = _rows(home, "select failed_gate from fct_candidate_comparison where latency_gate = 'fail'")
    assert all("target" in r["failed_gate"] for r in failed)


def test_money_columns_are_exact_decimals(home: Path) -> None:
    rows = _rows(home, "select * from fct_candidate_comparison")
    for r in rows:
        for col in MONEY_COLUMNS:
            v = r[col]
            if v is None:
                continue
            assert isinstance(v, Decimal), (col, v)
            assert -v.as_tuple().exponent <= 12, (col, v)
            # no binary residue such as 17461.600000000002: the value is its own 8-decimal rounding
            assert v == round(v, 8), (r["candidate"], col, v)


def test_every_workload_type_gets_ranked_candidates_or_names_the_benchmark(home: Path, tmp_path: Path) -> None:
    rows = _rows(home, "select * from fct_candidate_comparison")
    for w in _workloads():
        mine = [r for r in rows if r["workload_id"] == w["id"]]
        assert any(r["route_kind"] == "current" for r in mine), w["id"]
        ranked = [r for r in mine if r["rank"] is not None or r["status"] == "eligible pending evidence"]
        missing = [r for r in mine if r["route_kind"] == "missing_evidence"]
        assert ranked or (missing and all(r["evidence_to_run"] for r in missing)), w["id"]
        for r in ranked:
            assert r["evidence"] in ("measured", "same_gpu", "projected", "analogue", "missing")
        md, js = write_decision_record(home / "serving.duckdb", tmp_path, w["id"], date(2025, 5, 1))
        assert md.exists() and js.exists()
    # Training, fine-tuning, media and evals are priced from their own runs; batch from the same
    # model's serving runs (analogue); embeddings from the MLPerf BERT-large encoder analogue. The
    # API-only code agent has no GPU route: its API routes are priced on today's token mix and wait on
    # evidence (latency, and acceptance for the smaller models).
    with_rank = {r["workload_id"] for r in rows if r["rank"] == 1}
    assert with_rank == {"chat-assistant-70b", "batch-summarise-70b", "llm-pretrain-7b", "chat-ft-llama8b",
                         "support-lora-8b", "product-images", "promo-video", "nightly-evals", "search-embed"}
    covered = {r["workload_id"] for r in rows
               if r["rank"] is not None or (r["status"] == "eligible pending evidence" and r["monthly_savings"] > 0)}
    assert covered == {w["id"] for w in _workloads()}
    embed = [r for r in rows if r["workload_id"] == "search-embed" and r["route_kind"] == "gpu"]
    assert embed and all(r["evidence"] == "analogue" and "MLPerf Inference bert-99 Offline" in r["notes"] for r in embed)
    agent = [r for r in rows if r["workload_id"] == "code-agent"]
    assert not [r for r in agent if r["route_kind"] == "missing_evidence"]
    haiku = next(r for r in agent if "claude-3-5-haiku" in r["candidate"])
    assert haiku["status"] == "eligible pending evidence" and haiku["quality_gate"] == "unknown"
    assert "acceptance eval of claude-3-5-haiku" in haiku["evidence_to_run"]
    assert "tokens per output from the API spend" in haiku["notes"]
    # Fine-tuning on another GPU is scaled by MLPerf Training llama2_70b_lora (real logs): H100 median
    # 1,643.207 s x 8 GPUs = 3.6516 GPU-h; H200 median 1,411.793 s x 8 = 3.1373 -> x 0.859.
    h200 = next(r for r in rows if r["workload_id"] == "chat-ft-llama8b" and r["gpu_model"] == "H200-SXM-141GB")
    assert "MLPerf Training llama2_70b_lora" in h200["notes"] and "x 0.859" in h200["notes"]
    pretrain = [r for r in rows if r["workload_id"] == "llm-pretrain-7b" and r["route_kind"] == "gpu"]
    assert pretrain and all(r["evidence"] in ("measured", "same_gpu", "projected") for r in pretrain)
    batch = [r for r in rows if r["workload_id"] == "batch-summarise-70b" and r["route_kind"] == "gpu"]
    assert batch and all(r["evidence"] == "analogue" for r in batch)


def test_capacity_options_compare_like_with_like(home: Path) -> None:
    best = _rows(home, f"select * from fct_candidate_comparison where workload_id = '{CHAT}' and rank = 1")[0]
    opts = {r["option"]: r for r in _rows(home, f"select * from fct_capacity_options where workload_id = '{CHAT}'")}
    assert opts["on-demand"]["compute_cost"] == best["gpu_cost"]  # always-on: every hour of the month
    assert opts["on-demand"]["needed_utilisation"] == 1.0
    rate = best["price_per_instance_hour"] * best["instances"]
    # Reserved on the candidate's own month: April = 30 days x 24 = 720 h (not the 730-h average), so
    # reserved and on-demand cover the same hours.
    assert opts["reserved-1y"]["compute_cost"] == pytest.approx(rate * Decimal("0.62") * 720)
    assert opts["reserved-1y"]["hours_billed"] == 720 == best["billed_hours"]
    assert opts["reserved-1y"]["break_even_utilisation"] == pytest.approx(0.62)
    assert opts["spot"]["break_even_utilisation"] is None  # not a commitment
    scopes = {o["scope_cost"] for k, o in opts.items() if k != "api route"}
    assert len(scopes) == 1  # the same storage/network/labour scope in every GPU option
