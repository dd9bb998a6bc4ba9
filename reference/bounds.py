"""THE plausibility bounds: the largest figure each input may carry, with its physics or market reason.

Part of the shared reference facts (the `reference` package: pure data, standard library only);
`warehouse/reference.py` generates the dbt macro `plausibility(name)` from PLAUSIBILITY. A row whose
figure breaks a bound is quarantined at load (sources/plausibility.py for every family,
sources/billing/gates.py for billing): dropped from raw, listed in audit.dq_rejects with the figure
and the bound. docs/sources/plausibility.md lists which figure of which table meets which bound.

Money bounds are in USD; a figure in another currency is judged against bound x
UNITS_PER_USD_CEILING[currency]. Every bound sits well above the dearest real case named in its
comment, so a real row is never rejected; what breaks one is a typo, a unit slip or a hostile file.
"""

from __future__ import annotations

from reference.instances import INSTANCE_TYPES


def _largest_instance() -> int:
    """GPUs in the largest machine of the instance catalogue (16: AWS p2.16xlarge, GCP a2-megagpu-16g)."""
    return int(max(float(r[3]) for r in INSTANCE_TYPES if r[3] and r[4] == "instance"))


#: Bound name -> value (text, exact). Billing (load): max_line_amount on |BilledCost| and
#: |EffectiveCost|, max_per_hour on a Usage line priced in hours (only from unit_check_min_amount up:
#: cent rounding of a tiny line is no price). dbt (fct_bill_vs_list_price): the last two billing ones.
PLAUSIBILITY: dict[str, str] = {
    "max_line_amount": "1000000000",  # a billion USD on one bill line: no real GPU bill has it
    "max_per_hour": "1000",  # the dearest cloud instance lists near 400 USD/h (u7in-32tb)
    "unit_check_min_amount": "1",
    "max_per_gpu_hour": "100",  # H100/H200 list near 10-15 USD per GPU-hour; B300 on demand under 20
    "bill_rate_tolerance": "0.10",  # effective / list beyond 1 +- this is flagged
    "max_api_cost_per_token": "0.01",  # 10,000 USD per 1M tokens: >15x the dearest listed model (~600/1M)
    "max_gpus_per_job": "100000",  # the largest clusters run ~100k GPUs; one job cannot hold more
    # One API request: the longest context sold (2M tokens) at the dearest listed price (600 USD per
    # 1M output tokens) costs 1,200 USD; 10,000 is 8x that.
    "max_api_request_amount": "10000",
    # A request that counts no tokens is an image, audio, video or tool call: an image lists at most
    # 0.25 USD, a generated video second 0.75 USD (a minute: 45 USD); 100 USD is 2x a minute of video.
    "max_api_spend_without_tokens": "100",
    # One provider cost-report line per day: the largest API accounts spend a few hundred million USD
    # a year (about 1M USD a day); 10M USD in one day's line is 10x that. Judged per day of bucket.
    "max_api_bucket_per_day": "10000000",
    # GPUs one node or instance holds: the largest machine in the instance catalogue (HGX/DGX boards
    # hold 8; the densest servers sold hold 16). A Slurm job cannot use more than nodes x this.
    "max_gpus_per_node": str(_largest_instance()),
    # One eval suite or media batch is inference on replicas of one model: the largest model needs a
    # 16-32 GPU replica; 1,024 GPUs (128 HGX nodes) for one batch is beyond any inference pool booked.
    "max_gpus_per_batch_run": "1024",
    # Percent figures (utilisation) are 0-100 by definition; DCGM profiling ratios are 0-1.
    "max_percent": "100",
    "max_ratio": "1",
    # Clock slack when a stated duration is compared with its own start/end (rounding to 0.01 h,
    # scheduler accounting): 1 % + 0.01 h, as for GPU-hours against GPUs x elapsed hours.
    "duration_slack_rel": "0.01",
    "duration_slack_hours": "0.01",
}

#: Upper bounds of units per USD (about 2x the 2025 rate: a rate move never rejects a real line);
#: an unlisted currency gets UNITS_PER_USD_DEFAULT (lenient, never a false reject).
UNITS_PER_USD_CEILING: dict[str, int] = {
    "USD": 1, "EUR": 2, "GBP": 2, "CHF": 2, "CAD": 3, "AUD": 3, "NZD": 3, "SGD": 3, "SAR": 8, "MYR": 10,
    "PLN": 10, "BRL": 15, "CNY": 15, "DKK": 15, "HKD": 20, "NOK": 25, "SEK": 25, "ZAR": 40, "MXN": 40,
    "TWD": 70, "TRY": 100, "INR": 200, "RUB": 300, "JPY": 400, "KRW": 3000, "ARS": 5000, "COP": 10000,
    "IDR": 40000, "VND": 60000, "LBP": 200000, "IRR": 2000000,
}
UNITS_PER_USD_DEFAULT = 20000


def units_per_usd_case(code_sql: str) -> str:
    """SQL: the units-per-USD ceiling of the currency code `code_sql` evaluates to (the caller trims and
    upper-cases it), UNITS_PER_USD_DEFAULT for a code not listed. One rendering for the load-time gates
    (sources/plausibility.py, sources/billing/gates.py) and the dbt macro (warehouse/reference.py)."""
    whens = " ".join(f"when '{c}' then {n}" for c, n in UNITS_PER_USD_CEILING.items())
    return f"case {code_sql} {whens} else {UNITS_PER_USD_DEFAULT} end"
