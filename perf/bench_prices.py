"""Benchmark: parse throughput of the Karpenter AWS price history (rows/s), vs DuckDB reading it raw.

Run: .venv/bin/python perf/bench_prices.py [path] [repeats]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import duckdb

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sources.prices.karpenter import parse_aws

DEFAULT = REPO / "samples" / "inputs" / "prices" / "karpenter_aws_ondemand_gpu_prices_history.csv"


def main() -> None:
    """Print input rows/s for parse_aws and for a bare DuckDB read_csv of the same file."""
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    raw_rows = duckdb.sql(f"select count(*) from read_csv('{path}', all_varchar = true)").fetchone()[0]
    best_parse = best_raw = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = parse_aws(path)
        best_parse = min(best_parse, time.perf_counter() - t0)
        t0 = time.perf_counter()
        duckdb.connect().sql(f"select * from read_csv('{path}', all_varchar = true)").arrow()
        best_raw = min(best_raw, time.perf_counter() - t0)
    kept = out.tables["gpu_price_observations"].num_rows
    print(f"file: {path.name} ({path.stat().st_size / 1e6:.2f} MB, {raw_rows} data rows)")
    print(
        f"parse_aws: best {best_parse * 1000:.1f} ms -> {raw_rows / best_parse:,.0f} input rows/s ({kept} rows kept, {len(out.rejects)} rejects)"
    )
    print(
        f"duckdb read_csv raw: best {best_raw * 1000:.1f} ms -> {raw_rows / best_raw:,.0f} rows/s; ratio parse/raw = {best_parse / best_raw:.1f}x"
    )


if __name__ == "__main__":
    main()
