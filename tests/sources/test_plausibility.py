"""Load-time plausibility gates for every family but billing (sources/plausibility.py).

Each case is one hand-made row against a bound of reference/bounds.py PLAUSIBILITY (USD):
max_per_hour 1,000; max_per_gpu_hour 100; max_line_amount 1e9; max_api_cost_per_token 0.01;
max_api_request_amount 10,000; max_api_spend_without_tokens 100; max_api_bucket_per_day 1e7;
max_gpus_per_job 100,000; max_gpus_per_node 16; max_gpus_per_batch_run 1,024; percentages 0-100,
ratios 0-1; durations against the row's own start/end with 1 % + 0.01 h slack. Another currency is judged against bound x UNITS_PER_USD_CEILING
(JPY 400: an hourly JPY price is implausible above 400,000). Good rows stay; each bad row is
dropped with one reject naming its line, column, value and bound.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import pyarrow as pa

from sources.common import ParseOutput, Reject, StreamEnd
from sources.plausibility import gate, gate_stream
from warehouse.reference import PLAUSIBILITY, UNITS_PER_USD_CEILING


def _out(table: str, rows: list[dict]) -> ParseOutput:
    return ParseOutput(tables={table: pa.Table.from_pylist([{"_source_line": i + 2, **r} for i, r in enumerate(rows)])})


def _rules(out: ParseOutput) -> list[tuple[int, str, str]]:
    return [(r.line, r.rule, r.column) for r in out.rejects]


def test_bounds_are_the_documented_ones() -> None:
    assert (PLAUSIBILITY["max_per_hour"], PLAUSIBILITY["max_per_gpu_hour"]) == ("1000", "100")
    assert (PLAUSIBILITY["max_api_cost_per_token"], PLAUSIBILITY["max_gpus_per_job"]) == ("0.01", "100000")
    assert UNITS_PER_USD_CEILING["JPY"] == 400
    assert (PLAUSIBILITY["max_api_request_amount"], PLAUSIBILITY["max_api_spend_without_tokens"],
            PLAUSIBILITY["max_api_bucket_per_day"]) == ("10000", "100", "10000000")
    # the largest machine of the instance catalogue holds 16 GPUs (p2.16xlarge, a2-megagpu-16g)
    assert (PLAUSIBILITY["max_gpus_per_node"], PLAUSIBILITY["max_gpus_per_batch_run"]) == ("16", "1024")


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
        {"spend": "999999999.12", "total_tokens": 0},   # 7: under 1e9 but above 10,000 per request
        {"spend": "150", "total_tokens": 0},            # 8: 150 > 100 for a request that counts no tokens
        {"spend": "9000", "total_tokens": 1000000},     # 9: 9,000 <= 10,000; 0.009 <= 0.01 per token: kept
        {"spend": "99", "total_tokens": None},          # 10: 99 <= 100 without tokens: kept
    ]))
    assert _rules(out) == [(3, "implausible_unit_price", "spend"), (4, "implausible_amount", "spend"),
                           (5, "implausible_amount", "spend"), (7, "implausible_amount", "spend"),
                           (8, "implausible_amount", "spend")]
    assert out.tables["api_requests"]["_source_line"].to_pylist() == [2, 6, 9, 10]
    [seven, eight] = [r for r in out.rejects if r.line in (7, 8)]
    assert "max_api_request_amount" in seven.message and "bound 10,000" in seven.message
    assert "spend = 999,999,999.12 breaks" in seven.message  # the figure as written, never 1e+09
    assert "max_api_spend_without_tokens" in eight.message and "bound 100" in eight.message



def test_api_spend_in_another_currency_is_judged_against_its_own_ceiling() -> None:
    # JPY: 400 units per USD ceiling. 3,000,000 JPY <= 10,000 x 400 = 4,000,000: kept; 5,000,000 above it.
    # 30,000 JPY over 0 tokens <= 100 x 400 = 40,000: kept; 50,000 above it. A currency the table does not
    # know is judged at UNITS_PER_USD_DEFAULT (20,000): 150 XTS without tokens <= 100 x 20,000, kept.
    out = gate(_out("api_requests", [
        {"spend": "3000000", "total_tokens": 10**9, "currency": "JPY"},  # 2: 0.003 JPY per token: kept
        {"spend": "5000000", "total_tokens": 10**9, "currency": "jpy "},  # 3: spelled loosely, still JPY
        {"spend": "30000", "total_tokens": 0, "currency": "JPY"},         # 4: kept
        {"spend": "50000", "total_tokens": 0, "currency": "JPY"},         # 5: > 40,000
        {"spend": "150", "total_tokens": 0, "currency": "XTS"},           # 6: kept
        {"spend": "150", "total_tokens": 0, "currency": None},            # 7: no currency: USD, > 100
    ]))
    assert _rules(out) == [(3, "implausible_amount", "spend"), (5, "implausible_amount", "spend"),
                           (7, "implausible_amount", "spend")]
    assert "bound 4,000,000" in out.rejects[0].message and "bound 40,000" in out.rejects[1].message
    assert out.tables["api_requests"]["_source_line"].to_pylist() == [2, 4, 6]


def test_gates_in_several_threads_see_only_their_own_rows() -> None:
    # The gates share one in-memory database (sources.common.scratch_connection); each call's view `_t`
    # and registration `_raw` must stay its own. Thread k gates 200 rows whose line 2 + k is its only
    # bad one (spend -1); every call must name exactly that line.
    def one(k: int) -> list[int]:
        rows = [{"spend": "-1" if i == k else "1", "total_tokens": 1000} for i in range(200)]
        return [r.line for r in gate(_out("api_requests", rows)).rejects]

    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(one, [k % 200 for k in range(64)]))
    assert found == [[2 + k % 200] for k in range(64)]

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


def test_prices_without_a_gpu_count_are_judged_per_gpu_through_the_instance_catalogue() -> None:
    out = gate(_out("gpu_price_observations", [
        {"sku": "g5.xlarge", "price": "999.99", "price_unit": "hour", "currency": "USD", "gpu_count": None},
        # 2: 999.99 <= 1,000 per hour, but g5.xlarge holds 1 GPU: 999.99 per GPU-hour > 100
        {"sku": "p5.48xlarge", "price": "98.32", "price_unit": "hour", "currency": "USD", "gpu_count": None},
        # 3: 8 GPUs in the catalogue: 12.29 per GPU-hour, kept
        {"sku": "x9.unknown", "price": "500", "price_unit": "hour", "currency": "USD", "gpu_count": None},
        # 4: not in the catalogue: judged per hour only (500 <= 1,000), kept
        {"sku": "g5.xlarge", "price": "999.99", "price_unit": "hour", "currency": "USD", "gpu_count": "16"},
        # 5: the file's own count wins: 999.99 / 16 = 62.5, kept
    ]))
    assert _rules(out) == [(2, "implausible_price", "price")]
    assert "instance catalogue" in out.rejects[0].message and "999.99" in out.rejects[0].message
    assert out.tables["gpu_price_observations"]["_source_line"].to_pylist() == [3, 4, 5]


def test_quotes() -> None:
    out = gate(_out("price_quotes", [
        {"sku": "p5.48xlarge", "price": "38.5", "price_unit": "hour", "currency": "USD", "gpu_count": "8",
         "minimum_commitment": "337260"},                                                # 2: 4.81/GPU-h: kept
        {"sku": "8x-h100", "price": "1000000000000", "price_unit": "gpu-hour", "currency": "USD", "gpu_count": "64",
         "minimum_commitment": None},                                                    # 3: 1e12 > 100
        {"sku": "8x-h100", "price": "1.89", "price_unit": "gpu-hour", "currency": "EUR", "gpu_count": "64",
         "minimum_commitment": "5000000000"},                                            # 4: 5e9 > 1e9 x 2 (EUR)
        {"sku": "g5.xlarge", "price": "150", "price_unit": "hour", "currency": "USD", "gpu_count": None,
         "minimum_commitment": None},                                                    # 5: catalogue: 1 GPU, 150 > 100
    ]))
    assert _rules(out) == [(3, "implausible_price", "price"), (4, "implausible_price", "minimum_commitment"),
                           (5, "implausible_price", "price")]
    assert out.tables["price_quotes"]["_source_line"].to_pylist() == [2]


def test_api_cost_buckets_per_day_of_bucket() -> None:
    d0, d1, d7 = datetime(2025, 4, 1), datetime(2025, 4, 2), datetime(2025, 4, 8)
    out = gate(_out("api_cost_buckets", [
        {"amount": "0.06", "list_amount": None, "currency": "USD", "bucket_start": d0, "bucket_end": d1},  # 2: kept
        {"amount": "1e12", "list_amount": None, "currency": "USD", "bucket_start": d0, "bucket_end": d1},  # 3: > 1e7
        {"amount": "5e7", "list_amount": None, "currency": "USD", "bucket_start": d0, "bucket_end": d7},   # 4: 7 days: 7e7, kept
        {"amount": "-2e7", "list_amount": None, "currency": "USD", "bucket_start": d0, "bucket_end": d1},  # 5: |-2e7| > 1e7
        {"amount": "1", "list_amount": "3e7", "currency": "USD", "bucket_start": d0, "bucket_end": d1},    # 6: list 3e7 > 1e7
    ]))
    assert _rules(out) == [(3, "implausible_amount", "amount"), (5, "implausible_amount", "amount"),
                           (6, "implausible_amount", "list_amount")]
    assert out.tables["api_cost_buckets"]["_source_line"].to_pylist() == [2, 4]


def test_jobs_against_nodes_own_span_and_percentages() -> None:
    t0, t1 = datetime(2025, 4, 1, 0, 0), datetime(2025, 4, 1, 2, 0)  # 2 hours = 7,200 s
    out = gate(_out("gpu_jobs", [
        {"gpu_count": 32.0, "n_nodes": 4, "started_at": t0, "ended_at": t1, "elapsed_s": 7200.0,
         "gpu_util_pct": 95.0, "gpu_share": 1.0},                    # 2: 32 <= 4 x 16: kept
        {"gpu_count": 10000.0, "n_nodes": 1, "started_at": t0, "ended_at": t1, "elapsed_s": 7200.0,
         "gpu_util_pct": None, "gpu_share": None},                   # 3: gres/gpu=10000 on one node > 16
        {"gpu_count": 1.0, "n_nodes": 1, "started_at": t0, "ended_at": t1, "elapsed_s": 3.6e9,
         "gpu_util_pct": None, "gpu_share": None},                   # 4: 1e6 h elapsed in a 2 h span
        {"gpu_count": 1.0, "n_nodes": 1, "started_at": t0, "ended_at": t1, "elapsed_s": 7200.0,
         "gpu_util_pct": 120.0, "gpu_share": None},                  # 5: 120 % utilisation
        {"gpu_count": 1.0, "n_nodes": None, "started_at": t0, "ended_at": t1, "elapsed_s": 7200.0,
         "gpu_util_pct": None, "gpu_share": 1.5},                    # 6: a share of 1.5 GPUs of one GPU
    ]))
    assert _rules(out) == [(3, "implausible_usage", "gpu_count"), (4, "implausible_usage", "elapsed_s"),
                           (5, "implausible_usage", "gpu_util_pct"), (6, "implausible_usage", "gpu_share")]
    assert out.tables["gpu_jobs"]["_source_line"].to_pylist() == [2]
    assert "nodes x max_gpus_per_node" in out.rejects[0].message and "bound 16" in out.rejects[0].message


def test_gpu_samples_utilisation_and_ratios() -> None:
    out = gate(_out("gpu_samples", [
        {"gpu_util_pct": 42.0, "sm_active": 0.5, "fb_used_mib": 100.0},     # 2: kept
        {"gpu_util_pct": 5000.0, "sm_active": None, "fb_used_mib": 100.0},  # 3: > 100 %
        {"gpu_util_pct": -40.0, "sm_active": None, "fb_used_mib": 100.0},   # 4: < 0 %
        {"gpu_util_pct": 100.0, "sm_active": 1.0, "fb_used_mib": 0.0},      # 5: the bounds themselves: kept
        {"gpu_util_pct": None, "sm_active": 1.7, "fb_used_mib": None},      # 6: a ratio above 1
        {"gpu_util_pct": 10.0, "sm_active": None, "fb_used_mib": -5.0},     # 7: negative memory
    ]))
    assert _rules(out) == [(3, "implausible_usage", "gpu_util_pct"), (4, "implausible_usage", "gpu_util_pct"),
                           (6, "implausible_usage", "sm_active"), (7, "implausible_usage", "fb_used_mib")]
    assert out.tables["gpu_samples"]["_source_line"].to_pylist() == [2, 5]


def test_batched_gate_moves_reject_lines_like_the_rows() -> None:
    """A batched parse's rows carry provisional lines (index + 2); a line its reader skipped shifts the
    rest by one, and the gate's rejects are moved the same way."""

    class Stream:
        table = "gpu_samples"

        def batches(self):
            yield pa.Table.from_pylist([{"_source_line": 2, "gpu_util_pct": 10.0},
                                        {"_source_line": 3, "gpu_util_pct": 5000.0}])
            yield pa.Table.from_pylist([{"_source_line": 4, "gpu_util_pct": -40.0}])

        def finish(self) -> StreamEnd:
            return StreamEnd(rejects=[Reject(3, "non_numeric", "reader skipped line 3")], rejected_lines=[3])

    gated = gate_stream(Stream())
    kept = [b["_source_line"].to_pylist() for b in gated.batches()]
    end = gated.finish()
    assert kept == [[2], []]
    # provisional 3 -> file line 4 and provisional 4 -> file line 5 (file line 3 was skipped)
    assert [(r.line, r.rule) for r in end.rejects] == [(3, "non_numeric"), (4, "implausible_usage"),
                                                       (5, "implausible_usage")]


def test_runs_against_their_own_span() -> None:
    t0, t1 = datetime(2025, 4, 14, 6, 0), datetime(2025, 4, 14, 8, 30)  # 2.5 hours
    out = gate(_out("media_batches", [
        {"gpu_count": 4, "started_at": t0, "ended_at": t1, "gpu_hours": 10.0},    # 2: 4 x 2.5 = 10: kept
        {"gpu_count": 4, "started_at": t0, "ended_at": t1, "gpu_hours": 1e9},     # 3: 1e9 > 10 x 1.01 + 0.01
        {"gpu_count": 2000, "started_at": t0, "ended_at": t1, "gpu_hours": 1.0},  # 4: 2,000 GPUs > 1,024
    ]))
    assert _rules(out) == [(3, "implausible_run", "gpu_hours"), (4, "implausible_run", "gpu_count")]
    out = gate(_out("eval_runs", [
        {"gpu_count": 4, "started_at": t0, "ended_at": t1, "wall_hours": 2.5},      # 2: kept
        {"gpu_count": 10000, "started_at": t0, "ended_at": t1, "wall_hours": 2.5},  # 3: 10,000 GPUs > 1,024
        {"gpu_count": 4, "started_at": t0, "ended_at": t1, "wall_hours": 1e6},      # 4: 1e6 h > 2.5 h span
        {"gpu_count": 1024, "started_at": t0, "ended_at": t1, "wall_hours": 2.53},  # 5: 1,024 GPUs; 2.53 <= 2.5 x 1.01 + 0.01
    ]))
    assert _rules(out) == [(3, "implausible_run", "gpu_count"), (4, "implausible_run", "wall_hours")]
    assert out.tables["eval_runs"]["_source_line"].to_pylist() == [2, 5]
    out = gate(_out("training_runs", [
        {"gpu_count": 10000, "started_at": t0, "ended_at": t1, "wall_hours": 2.5},  # 2: a big training job: kept
        {"gpu_count": 64, "started_at": t0, "ended_at": t1, "wall_hours": -1.0},    # 3: negative duration
    ]))
    assert _rules(out) == [(3, "implausible_run", "wall_hours")]


def test_a_forked_child_gates_on_a_database_of_its_own() -> None:
    # DuckDB is not fork-safe: a child forked after the parent used the shared scratch database must open
    # its own (sources.common). The child gates 50 rows whose line 7 is the bad one, and exits 0 only when
    # that is the one reject and its database is not the parent's; an alarm ends a hung child.
    import os
    import signal

    import sources.common as common

    def rows(k: int) -> ParseOutput:
        return _out("api_requests", [{"spend": "-1" if i == k else "1", "total_tokens": 1000} for i in range(50)])

    assert [r.line for r in gate(rows(3)).rejects] == [5]
    parents = common._SCRATCH
    assert parents is not None
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 3
        try:
            signal.alarm(20)
            lines = [r.line for r in gate(rows(5)).rejects]
            code = 0 if lines == [7] and common._SCRATCH is not None and common._SCRATCH is not parents else 4
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert common._SCRATCH is parents  # the parent keeps its own
