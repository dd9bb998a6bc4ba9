"""Benchmark-family files: vLLM serving results (with per-request arrays) and our own CSVs.

- vLLM `benchmark_serving.py --save-result` JSONs for the LLM serving workloads, one sweep
  (request rates 1, 4, 16, inf) per week and instance type the workload runs on, plus the
  `.commands.json` sidecar naming the instance. Summary stats are computed from the arrays.
- training_runs (pre-training, full fine-tune, LoRA), eval_runs, media_batches: the Slurm
  jobs of those workloads seen by their owners (same ids in `run_id`, same times, same GPUs).
- quality_outcomes: per workload and day, produced/accepted after the quality and safety filters.
"""

from __future__ import annotations

import csv
import io
import json
import random
from collections import defaultdict
from datetime import timedelta
from pathlib import Path

import duckdb
import numpy as np

from tools.generate.fleet import MIN_PER_DAY, Fleet, Job

RATES = ("01", "04", "16", "inf")
LLM_SERVING = {"chat-assistant-70b": "meta-llama/Llama-3.3-70B-Instruct",
               "batch-summarise-70b": "meta-llama/Llama-3.3-70B-Instruct"}
TPOT_S = {"H100": 0.017, "A100": 0.034, "L40S": 0.05}
TTFT_S = {"H100": 0.11, "A100": 0.24, "L40S": 0.4}
LOAD = {"01": 1.0, "04": 1.25, "16": 1.9, "inf": 2.6}
SERVER_ERROR = "Server disconnected without sending a response."


def _r6(x: float) -> float:
    return round(float(x), 6)


def _stats(prefix: str, values: list[float]) -> dict[str, float]:
    if not values:
        return {f"mean_{prefix}_ms": 0.0, f"median_{prefix}_ms": 0.0, f"std_{prefix}_ms": 0.0, f"p99_{prefix}_ms": 0.0}
    a = np.asarray(values) * 1000.0
    return {f"mean_{prefix}_ms": _r6(a.mean()), f"median_{prefix}_ms": _r6(np.median(a)),
            f"std_{prefix}_ms": _r6(a.std()), f"p99_{prefix}_ms": _r6(np.percentile(a, 99))}


def vllm_result(rng: random.Random, when: str, model: str, gpu_class: str, rate: str, n: int = 100) -> dict:
    load = LOAD[rate]
    input_lens, output_lens, ttfts, itls, errors = [], [], [], [], []
    e2els = []
    for _ in range(n):
        inp = max(4, int(rng.lognormvariate(5.2, 0.8)))
        out = max(2, min(1024, int(rng.lognormvariate(5.0, 0.7))))
        if rng.random() < 0.02:
            input_lens.append(inp)
            output_lens.append(0)
            ttfts.append(0.0)
            itls.append([])
            errors.append(SERVER_ERROR)
            continue
        ttft = _r6(TTFT_S[gpu_class] * load * rng.uniform(0.7, 1.6) + inp * 0.00004)
        gaps = [_r6(TPOT_S[gpu_class] * load * rng.uniform(0.75, 1.35)) for _ in range(out - 1)]
        input_lens.append(inp)
        output_lens.append(out)
        ttfts.append(ttft)
        itls.append(gaps)
        errors.append("")
        e2els.append(ttft + sum(gaps))
    ok = [i for i, e in enumerate(errors) if not e]
    rate_v = None if rate == "inf" else float(rate)
    duration = _r6((n / rate_v if rate_v else 0.0) + max(e2els) * (1.0 if rate_v else 2.2))
    total_in = sum(input_lens[i] for i in ok)
    total_out = sum(output_lens[i] for i in ok)
    tpots = [(sum(itls[i])) / (output_lens[i] - 1) for i in ok if output_lens[i] > 1]
    all_itl = [g for i in ok for g in itls[i]]
    good = sum(1 for i in ok if ttfts[i] * 1000 <= 3000
               and (output_lens[i] <= 1 or sum(itls[i]) / (output_lens[i] - 1) * 1000 <= 120))
    doc = {
        "date": when, "backend": "vllm", "model_id": model, "tokenizer_id": model, "num_prompts": n,
        "request_rate": "inf" if rate == "inf" else rate_v, "burstiness": 1.0, "max_concurrency": None,
        "duration": duration, "completed": len(ok), "total_input_tokens": total_in,
        "total_output_tokens": total_out, "request_throughput": _r6(len(ok) / duration),
        "request_goodput:": _r6(good / duration), "output_throughput": _r6(total_out / duration),
        "total_token_throughput": _r6((total_in + total_out) / duration),
        "input_lens": input_lens, "output_lens": output_lens, "ttfts": ttfts, "itls": itls,
        "generated_texts": ["" for _ in range(n)], "errors": errors,
    }
    doc.update(_stats("ttft", [ttfts[i] for i in ok]))
    doc.update(_stats("tpot", tpots))
    doc.update(_stats("itl", all_itl))
    doc.update(_stats("e2el", e2els))
    return doc


def write_vllm(fleet: Fleet, out: Path) -> dict[str, int]:
    counts = {}
    seen = sorted({(n.workload, n.type.sku, n.type.gpu_class, n.type.gpus) for n in fleet.nodes
                   if n.workload in LLM_SERVING})
    for week in range(0, fleet.days, 7):
        for workload, sku, gclass, gpus in seen:
            model = LLM_SERVING[workload]
            slug = model.replace("/", "-")
            rng = random.Random(f"vllm-{fleet.seed}-{week}-{workload}-{sku}")
            for k, rate in enumerate(RATES):
                when = (fleet.t(week * MIN_PER_DAY + 14 * 60 + 17 + 5 * k)).strftime("%Y%m%d-%H%M%S")
                stem = (f"{workload}__{week // 7 + 1:02d}_{sku}_tp{gpus}_pp1__serving_{slug}_tp{gpus}_pp1_"
                        f"sharegpt_qps_{rate}")
                doc = vllm_result(rng, when, model, gclass, rate)
                # vLLM key order (summary first): detection reads only the head of the file.
                (out / f"{stem}.json").write_text(json.dumps(doc), encoding="utf-8")
                cmd = {
                    "client_command": (f"python3 benchmark_serving.py --save-result --base-url http://{workload}.serving:8000 "
                                       f"--result-filename tp{gpus}_pp1_qps_{rate}.json --request-rate {rate} "
                                       f"--model={model} --backend=vllm --dataset-name=sharegpt --num-prompts=100 "
                                       f"--tensor-parallel-size {gpus}"),
                    "gpu_type": f"{sku} x 1",
                }
                (out / f"{stem}.commands.json").write_text(json.dumps(cmd, sort_keys=True, indent=2), encoding="utf-8")
                counts[f"{stem}.json"] = len(doc["input_lens"])
                counts[f"{stem}.commands.json"] = 1
    return counts


def _csv(path: Path, header: list[str], rows: list[list]) -> int:
    """Write a CSV; a small fleet may have no such runs, and a header-only file is not written."""
    if not rows:
        return 0
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")
    return len(rows)


def _iso(fleet: Fleet, minute: int) -> str:
    return fleet.t(minute).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pricing(fleet: Fleet, job: Job) -> tuple[str, str]:
    node = fleet.nodes[job.node]
    return node.type.provider, node.pricing.replace("-", "_")


RUN_KIND = {"llm-pretrain-7b": "pretrain", "chat-ft-llama8b": "full_finetune", "support-lora-8b": "lora"}
TARGET = {"pretrain": 0.62, "full_finetune": 0.80, "lora": 0.75}
OUTCOME = {"COMPLETED": "completed", "CANCELLED": "cancelled"}


def write_own_formats(fleet: Fleet, out: Path, api_dir: Path | None = None) -> dict[str, int]:
    rng = random.Random(f"own-{fleet.seed}")
    training, evals, media = [], [], []
    daily: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for j in sorted(fleet.jobs, key=lambda j: j.job_id):
        node = fleet.nodes[j.node]
        provider, pricing = _pricing(fleet, j)
        hours = (j.end - j.start) / 60
        gpu_h = hours * j.gpus
        day = min((j.end - 1) // MIN_PER_DAY, fleet.days - 1)
        if j.workload in RUN_KIND:
            kind = RUN_KIND[j.workload]
            outcome = OUTCOME.get(j.state, "failed")
            reached = outcome == "completed" and rng.random() < 0.8
            target = TARGET[kind]
            score = round(target + rng.uniform(0.001, 0.02), 3) if reached else round(target - rng.uniform(0.02, 0.2), 3)
            ckpt_every = 15 if kind == "lora" else 60
            ckpts = max(1, int(hours * 60) // ckpt_every)
            training.append([
                f"tr-{j.job_id}", j.workload, kind, node.type.ledger_model, j.gpus, provider, pricing,
                _iso(fleet, j.start), _iso(fleet, j.end), f"{hours:.2f}",
                f"{hours * rng.uniform(0.85, 0.98):.2f}" if reached else "", f"{target:.2f}", f"{score:.3f}",
                "true" if reached else "false", ckpts, f"{ckpts * rng.uniform(0.5, 5.0):.1f}",
                0 if outcome == "completed" else rng.randint(0, 3), outcome,
            ])
        elif j.workload == "nightly-evals":
            total = 1850
            outcome = {"COMPLETED": "completed", "CANCELLED": "cancelled"}.get(j.state, "partial")
            done = total if outcome == "completed" else int(total * rng.uniform(0.2, 0.9))
            failed = 0 if outcome == "completed" else total - done - (rng.randint(0, 50) if outcome == "cancelled" else 0)
            failed = max(0, failed)
            evals.append([
                f"ev-{j.job_id}", j.workload, "helm-lite+internal-qa", "ledger-7b", node.type.ledger_model, j.gpus,
                provider, pricing, _iso(fleet, j.start), _iso(fleet, j.end), f"{hours:.2f}", total, done, failed,
                rng.randint(0, 60), outcome,
            ])
        elif j.workload in ("product-images", "promo-video"):
            video = j.workload == "promo-video"
            ok = j.state == "COMPLETED"
            produced = int(gpu_h * (2.0 if video else 480) * rng.uniform(0.8, 1.2)) if ok else int(gpu_h * (0.5 if video else 120))
            rejected_safety = int(produced * rng.uniform(0.005, 0.04))
            rejected_quality = int(produced * rng.uniform(0.08, 0.3 if video else 0.18))
            accepted = produced - rejected_quality - rejected_safety
            media.append([
                f"{'vid' if video else 'img'}-{j.job_id}", j.workload, "video" if video else "image",
                node.type.ledger_model, j.gpus, _iso(fleet, j.start), _iso(fleet, j.end), f"{gpu_h:.2f}", produced,
                accepted, int(produced * rng.uniform(0.005, 0.03)) + (0 if ok else 5),
                f"{accepted * rng.uniform(4.0, 6.0):.1f}" if video else "", rng.randint(2, 45),
                int(accepted * (2.5 if video else 0.05)), rejected_safety,
            ])
            agg = daily[(j.workload, day)]
            agg[0] += produced
            agg[1] += accepted
            agg[2] += rejected_quality
            agg[3] += rejected_safety
        elif j.workload in ("batch-summarise-70b", "chat-assistant-70b") and j.state == "COMPLETED":
            per_gpu_h = 900 if j.workload == "batch-summarise-70b" else 1400
            produced = int(gpu_h * per_gpu_h * rng.uniform(0.9, 1.1))
            rq = int(produced * rng.uniform(0.02, 0.04))
            rs = int(produced * rng.uniform(0.0005, 0.004))
            agg = daily[(j.workload, day)]
            agg[0] += produced
            agg[1] += produced - rq - rs
            agg[2] += rq
            agg[3] += rs
    if api_dir is not None and any(api_dir.glob("*.csv")):
        con = duckdb.connect()
        try:
            for day, n in con.execute(
                f"""select cast(startTime as date) as d, count(*) from read_csv('{api_dir}/*.csv', header=true, all_varchar=true)
                    where request_tags like '%workload:code-agent%' and status = 'success' group by d order by d"""
            ).fetchall():
                produced = max(1, n // 12)  # ~12 model calls per agent task
                d = (day - fleet.start).days
                rq = int(produced * rng.uniform(0.25, 0.4))
                daily[("code-agent", d)] = [produced, produced - rq, rq, 0]
        finally:
            con.close()
    filters = {"product-images": "img-aesthetic-v3+nsfw", "promo-video": "clip-review-v1",
               "batch-summarise-70b": "summary-judge-v2", "chat-assistant-70b": "thumbs+policy-v5",
               "code-agent": "patch-tests-pass"}
    quality = [[w, (fleet.start + timedelta(days=d)).isoformat(), *v, filters[w]]
               for (w, d), v in sorted(daily.items()) if v[0] > 0]
    out.mkdir(parents=True, exist_ok=True)
    written = {
        "training_runs.csv": _csv(out / "training_runs.csv", [
            "run_id", "workload_id", "run_kind", "gpu_model", "gpu_count", "provider", "pricing_category", "started_at",
            "ended_at", "wall_hours", "time_to_target_hours", "target_eval_score", "eval_score_reached",
            "reached_target", "checkpoints_written", "checkpoint_minutes_total", "restarts", "outcome"], training),
        "eval_runs.csv": _csv(out / "eval_runs.csv", [
            "run_id", "workload_id", "suite", "model_id", "gpu_model", "gpu_count", "provider", "pricing_category",
            "started_at", "ended_at", "wall_hours", "tasks_total", "tasks_completed", "tasks_failed", "retries",
            "outcome"], evals),
        "media_batches.csv": _csv(out / "media_batches.csv", [
            "batch_id", "workload_id", "media_kind", "gpu_model", "gpu_count", "started_at", "ended_at", "gpu_hours",
            "produced", "accepted", "failed_renders", "seconds_of_video", "queue_minutes", "operator_review_minutes",
            "moderation_rejected"], media),
        "quality_outcomes.csv": _csv(out / "quality_outcomes.csv", [
            "workload_id", "day", "produced", "accepted", "rejected_quality", "rejected_safety", "filter_name"],
            quality),
    }
    return {k: v for k, v in written.items() if v}


def write_benchmarks(fleet: Fleet, out: Path, api_dir: Path | None = None) -> dict[str, int]:
    out.mkdir(parents=True, exist_ok=True)
    counts = write_vllm(fleet, out)
    counts.update(write_own_formats(fleet, out, api_dir))
    return counts
