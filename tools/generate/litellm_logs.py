"""A synthetic, reproducible LiteLLM_SpendLogs export (CSV or JSONL), row by row in Python.

No public row sample of LiteLLM spend logs exists, so this seeded generator writes the
committed sample (samples/inputs/api_spend/litellm_spend_logs_sample.csv, 300 requests) and
the large benchmark files (1M-10M rows). Same seed and arguments -> byte-identical output.

Workloads (April 2025, three days by default):
- code-agent (team platform): agentic coding via API, claude-3-5-sonnet-20241022 (and some
  gpt-4o), long prompts with prompt-cache reads, grouped in sessions.
- chat-assistant-70b (team support): served by our own vLLM (spend 0 in LiteLLM) and falling
  back to a hosted API (together_ai Llama 3.1 70B Turbo) when the cluster is saturated;
  some LiteLLM response-cache hits (spend 0).
- nightly-evals (team research): 01:00-04:00 UTC bursts on gpt-4o-mini / claude-3-5-haiku.
Failures (~6%) include a few billed ones (provider charged the prompt, then the call
timed out); 429s show up as metadata.attempted_retries.

Spend = uncached prompt * input_cost_per_token + cached * cache_read_input_token_cost +
completion * output_cost_per_token, with the litellm 1.55.0 catalog prices below
(copied from litellm_model_prices_v1.55.0_full.json), computed in Decimal.

Usage: python -m tools.generate litellm --rows 300 --out samples/inputs/api_spend/litellm_spend_logs_sample.csv
       python -m tools.generate litellm --rows 1000000 --out /tmp/litellm_1m.csv
The fleet generator's LiteLLM files (api_spend.py) use the same catalogue, set-based in DuckDB.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

from tools.generate.fleet import SAMPLE_OWNERS

# model -> (provider, model_group, input, output, cache_read) USD per token, litellm 1.55.0 catalog
# entries of these keys. Also used by the fleet generator (api_spend.py).
MODELS: dict[str, tuple[str, str, str, str, str | None]] = {
    "claude-3-5-sonnet-20241022": ("anthropic", "claude-3-5-sonnet", "0.000003", "0.000015", "0.0000003"),
    "gpt-4o": ("openai", "gpt-4o", "0.0000025", "0.00001", "0.00000125"),
    "gpt-4o-mini": ("openai", "gpt-4o-mini", "0.00000015", "0.0000006", "0.000000075"),
    "claude-3-5-haiku-20241022": ("anthropic", "claude-3-5-haiku", "0.000001", "0.000005", "0.0000001"),
    "together_ai/meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo": ("together_ai", "chat-assistant-70b", "0.00000088",
                                                                 "0.00000088", None),
    # self-hosted: no API price
    "hosted_vllm/meta-llama/Llama-3.3-70B-Instruct": ("hosted_vllm", "chat-assistant-70b", "0", "0", None),
}
# (input, output, cache_read) USD per token.
PRICES: dict[str, tuple[str, str, str | None]] = {m: v[2:] for m, v in MODELS.items()}

COLUMNS = (
    "request_id", "call_type", "api_key", "spend", "total_tokens", "prompt_tokens",
    "completion_tokens", "startTime", "endTime", "completionStartTime", "request_duration_ms",
    "model", "model_id", "model_group", "custom_llm_provider", "api_base", "user", "metadata",
    "cache_hit", "request_tags", "team_id", "organization_id", "end_user", "session_id", "status",
)

# Columns written as JSON values (not strings) in JSONL output.
JSON_TYPED = {"metadata", "request_tags", "spend", "total_tokens", "prompt_tokens", "completion_tokens", "request_duration_ms"}

TEAMS = {w: SAMPLE_OWNERS[w] for w in ("code-agent", "chat-assistant-70b", "nightly-evals")}
USERS = {
    "platform": ["u-amara", "u-bjorn", "u-chen", "u-dara"],
    "support": ["svc-support-bot"],
    "research": ["svc-evals"],
}
API_BASES = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com/v1",
    "together_ai": "https://api.together.xyz/v1",
    "hosted_vllm": "http://vllm-70b.gpu.internal:8000/v1",
}


def _key_hash(name: str) -> str:
    """LiteLLM stores sha256 of the virtual key, never the key."""
    return hashlib.sha256(f"sk-litellm-{name}".encode()).hexdigest()


KEYS = {team: _key_hash(team) for team in TEAMS.values()}


def _uuid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def _ts(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S.") + f"{t.microsecond // 1000:03d}"


def _spend(model: str, prompt: int, cached: int, completion: int) -> Decimal:
    inp, out, cache = PRICES[model]
    cache_price = Decimal(cache) if cache is not None else Decimal(inp)
    return (prompt - cached) * Decimal(inp) + cached * cache_price + completion * Decimal(out)


def _pick_workload(rng: random.Random) -> str:
    r = rng.random()
    return "code-agent" if r < 0.5 else "chat-assistant-70b" if r < 0.8 else "nightly-evals"


def _start_time(rng: random.Random, workload: str, day0: datetime, days: int) -> datetime:
    day = day0 + timedelta(days=rng.randrange(days))
    if workload == "nightly-evals":
        seconds = 3600 + rng.randrange(3 * 3600)  # 01:00-04:00 UTC
    else:
        seconds = 7 * 3600 + rng.randrange(12 * 3600)  # working hours, UTC
    return day + timedelta(seconds=seconds, milliseconds=rng.randrange(1000))


def make_row(rng: random.Random, day0: datetime, days: int) -> dict[str, str]:
    """One synthetic spend-log row."""
    workload = _pick_workload(rng)
    team = TEAMS[workload]
    retries = 0 if rng.random() < 0.9 else rng.choice([1, 1, 2])
    fallback = 0
    cache_hit = False
    end_user = ""
    session = ""
    if workload == "code-agent":
        model = "claude-3-5-sonnet-20241022" if rng.random() < 0.8 else "gpt-4o"
        prompt = rng.randint(6_000, 60_000)
        cached = int(prompt * rng.uniform(0.5, 0.9)) if rng.random() < 0.75 else 0
        completion = rng.randint(150, 2_500)
        session = f"sess-{rng.randrange(40):04d}"
    elif workload == "chat-assistant-70b":
        if rng.random() < 0.3:
            model, fallback = "together_ai/meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo", 1
        else:
            model = "hosted_vllm/meta-llama/Llama-3.3-70B-Instruct"
        prompt, cached, completion = rng.randint(300, 4_000), 0, rng.randint(50, 700)
        end_user = f"cust-{rng.randrange(500):05d}"
        cache_hit = rng.random() < 0.05
    else:
        model = "gpt-4o-mini" if rng.random() < 0.6 else "claude-3-5-haiku-20241022"
        prompt, completion = rng.randint(500, 8_000), rng.randint(20, 400)
        cached = int(prompt * 0.6) if rng.random() < 0.3 else 0
    provider, group = MODELS[model][:2]

    status = "success"
    failed = rng.random() < 0.06
    if failed:
        status = "failure"
        if rng.random() < 0.4:
            completion = 0  # billed failure: prompt was processed and charged, response lost (timeout)
        else:
            prompt = cached = completion = 0  # rejected before the provider billed anything
    spend = Decimal(0) if cache_hit else _spend(model, prompt, cached, completion)

    start = _start_time(rng, workload, day0, days)
    ttft = rng.randint(150, 2_500)
    duration = ttft + completion * rng.randint(8, 30) + (30_000 if failed and prompt else 0)
    if cache_hit:
        ttft, duration = 5, rng.randint(8, 40)
    end = start + timedelta(milliseconds=duration)
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    if provider == "anthropic":
        usage["cache_read_input_tokens"] = cached
    usage["prompt_tokens_details"] = {"cached_tokens": cached}
    user = rng.choice(USERS[team])
    metadata = {
        "user_api_key_alias": f"{team}-key",
        "user_api_key_team_alias": team,
        "attempted_retries": retries,
        "max_retries": 3,
        "attempted_fallbacks": fallback,
        "usage_object": usage,
    }
    if failed:
        metadata["error_information"] = {
            "error_class": "Timeout" if prompt else "RateLimitError",
            "error_code": "408" if prompt else "429",
        }
    return {
        "request_id": f"chatcmpl-{_uuid(rng)}",
        "call_type": "acompletion",
        "api_key": KEYS[team],
        "spend": repr(float(spend)),  # LiteLLM stores spend as a Postgres float
        "total_tokens": str(prompt + completion),
        "prompt_tokens": str(prompt),
        "completion_tokens": str(completion),
        "startTime": _ts(start),
        "endTime": _ts(end),
        "completionStartTime": _ts(start + timedelta(milliseconds=ttft)) if completion else "",
        "request_duration_ms": str(duration),
        "model": model,
        "model_id": hashlib.sha256(model.encode()).hexdigest()[:16],
        "model_group": group,
        "custom_llm_provider": provider,
        "api_base": API_BASES[provider],
        "user": user,
        "metadata": json.dumps(metadata, separators=(",", ":")),
        "cache_hit": "True" if cache_hit else "False",
        "request_tags": json.dumps([f"workload:{workload}", f"team:{team}"], separators=(",", ":")),
        "team_id": team,
        "organization_id": "org-gpu-ledger",
        "end_user": end_user,
        "session_id": session,
        "status": status,
    }


def generate(out: Path, rows: int, seed: int = 20250414, start: str = "2025-04-14", days: int = 3, fmt: str = "csv") -> int:
    """Write `rows` requests sorted by start time to `out` (csv or jsonl); return the row count."""
    rng = random.Random(seed)
    day0 = datetime.fromisoformat(start)
    out.parent.mkdir(parents=True, exist_ok=True)
    # Sorting needs all rows in memory; fine up to ~1M. Larger files are written in blocks
    # (each block sorted) so memory stays bounded; order within the file is then only per block.
    block = 1_000_000
    written = 0
    with open(out, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n") if fmt == "csv" else None
        if writer:
            writer.writeheader()
        while written < rows:
            n = min(block, rows - written)
            batch = sorted((make_row(rng, day0, days) for _ in range(n)), key=lambda r: r["startTime"])
            for row in batch:
                if writer:
                    writer.writerow(row)
                else:
                    # JSONL carries JSON types: numbers as numbers, metadata/tags as JSON values.
                    rec = {k: (json.loads(v) if k in JSON_TYPED and v != "" else v) for k, v in row.items()}
                    fh.write(json.dumps(rec, separators=(",", ":")) + "\n")
            written += n
    return written

