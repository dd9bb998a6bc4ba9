"""Load-time plausibility gates for prices, API spend and jobs (issue 19; sources/plausibility.py).

Each case is one hand-made row against a bound of warehouse/reference.py PLAUSIBILITY (USD):
max_per_hour 1,000; max_per_gpu_hour 100; max_line_amount 1e9; max_api_cost_per_token 0.01;
max_gpus_per_job 100,000. Another currency is judged against bound x UNITS_PER_USD_CEILING
(JPY 400: an hourly JPY price is implausible above 400,000). Good rows stay; each bad row is
dropped with one reject naming its line, column, value and bound.
"""

from __future__ import annotations

from datetime import datetime

import pyarrow as pa

from sources.common import ParseOutput
from sources.plausibility import gate
from warehouse.reference import PLAUSIBILITY, UNITS_PER_USD_CEILING


def _out(table: str, rows: list[dict]) -> ParseOutput:
    return ParseOutput(tables={table: pa.Table.from_pylist([{"_source_line": i + 2, **r} for i, r in enumerate(rows)])})


def _rules(out: ParseOutput) -> list[tuple[int, str, str]]:
    return [(r.line, r.rule, r.column) for r in out.rejects]


def test_bounds_are_the_documented_ones() -> None:
    assert (PLAUSIBILITY["max_per_hour"], PLAUSIBILITY["max_per_gpu_hour"]) == ("1000", "100")
    assert (PLAUSIBILITY["max_api_cost_per_token"], PLAUSIBILITY["max_gpus_per_job"]) == ("0.01", "100000")
    assert UNITS_PER_USD_CEILING["JPY"] == 400


def test_prices() -> None:
    out = gate(_out("gpu_price_observations", [
        {"price": "98.32", "price_unit": "hour", "currency": "USD", "gpu_count": "8"},      # 2: p5.48xlarge, 12.29/GPU-h: kept
        {"price": "1500", "price_unit": "hour", "currency": "USD", "gpu_count": None},      # 3: 1,500 > 1,000 per hour
        {"price": "120", "price_unit": "gpu-hour", "currency": "USD", "gpu_count": "1"},   # 4: 120 > 100 per GPU-hour
        {"price": "900", "price_unit": "hour", "currency": "USD", "gpu_count": "8"},       # 5: 900 / 8 = 112.5 > 100
        {"price": "-1", "price_unit": "hour", "currency": "USD", "gpu_count": "1"},        # 6: negative
        {"price": "300000", "price_unit": "hour", "currency": "JPY", "gpu_count": "8"},    # 7: < 1,000 x 400; 37,500 < 100 x 400: kept
        {"price": "500000", "price_unit": "hour", "currency": "JPY", "gpu_count": None},   # 8: 500,000 > 400,000
        {"price": "250000", "price_unit": "upfront", "currency": "USD", "gpu_count": "8"}, # 9: not an hourly price: kept
    ]))
    assert _rules(out) == [(3, "implausible_price", "price"), (4, "implausible_price", "price"),
                           (5, "implausible_price", "price"), (6, "implausible_price", "price"),
                           (8, "implausible_price", "price")]
    assert out.tables["gpu_price_observations"]["_source_line"].to_pylist() == [2, 7, 9]
    [five] = [r for r in out.rejects if r.line == 5]
    assert "112.5" in five.message and "max_per_gpu_hour (price / GPUs)" in five.message


def test_api_spend() -> None:
    out = gate(_out("api_requests", [
        {"spend": "0.0026434", "total_tokens": 3683},   # 2: 7.2e-7 per token (the LiteLLM sample): kept
        {"spend": "50", "total_tokens": 1000},          # 3: 0.05 per token > 0.01
        {"spend": "-0.5", "total_tokens": 10},          # 4: negative spend
        {"spend": "2000000000", "total_tokens": None},  # 5: above 1e9
        {"spend": "0.5", "total_tokens": 0},            # 6: no tokens (an image call): not judged per token, kept
    ]))
    assert _rules(out) == [(3, "implausible_unit_price", "spend"), (4, "implausible_amount", "spend"),
                           (5, "implausible_amount", "spend")]
    assert out.tables["api_requests"]["_source_line"].to_pylist() == [2, 6]


def test_jobs() -> None:
    t0, t1 = datetime(2025, 4, 1, 0, 0), datetime(2025, 4, 1, 2, 0)  # 2 hours
    out = gate(_out("gpu_jobs", [
        {"gpu_count": 8.0, "started_at": t0, "ended_at": t1, "gpu_hours": 16.0},        # 2: 8 x 2 = 16: kept
        {"gpu_count": 8.0, "started_at": t0, "ended_at": t1, "gpu_hours": 16.1},        # 3: 16.1 <= 16 x 1.01 + 0.01: kept
        {"gpu_count": 8.0, "started_at": t0, "ended_at": t1, "gpu_hours": 40.0},        # 4: 40 > 16.17
        {"gpu_count": 250000.0, "started_at": t0, "ended_at": t1, "gpu_hours": None},   # 5: more GPUs than any job
        {"gpu_count": 1.0, "started_at": t1, "ended_at": t0, "gpu_hours": 0.0},         # 6: ends before it starts
    ]))
    assert _rules(out) == [(4, "implausible_usage", "gpu_hours"), (5, "implausible_usage", "gpu_count"),
                           (6, "implausible_usage", "ended_at")]
    assert out.tables["gpu_jobs"]["_source_line"].to_pylist() == [2, 3]


def test_tables_without_rules_pass_untouched() -> None:
    out = gate(_out("benchmark_runs", [{"price": "1e12", "price_unit": "hour"}]))
    assert out.rejects == [] and out.tables["benchmark_runs"].num_rows == 1
