"""Benchmark: our LiteLLM spend-log parser vs a plain DuckDB read_csv of the same file.

    python perf/bench_api_ingest.py [--rows 1000000 --file /tmp/litellm_spend_1m.csv --repeat 2]

Generates the file with tools/generate/litellm_logs.py if missing, then times
  1. duckdb read_csv(auto) -> arrow            (the yardstick: DuckDB reading the raw file), and
  2. sources.api_spend.litellm_spend_logs.parse_csv (staging, typing, JSON extraction of
     metadata/tags, reject checks incl. duplicate request_id, -> arrow),
each best of --repeat runs, and prints rows/s and the ratio parse/raw.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sources.api_spend import litellm_spend_logs
from tools.generate.litellm_logs import generate


def _best(fn, repeat: int) -> tuple[float, int]:
    best, rows = float("inf"), 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        rows = fn()
        best = min(best, time.perf_counter() - t0)
    return best, rows


def main() -> None:
    """Run the benchmark and print the figures."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--file", type=Path, default=Path("/tmp/litellm_spend_1m.csv"))
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    if not args.file.exists():
        t0 = time.perf_counter()
        n = generate(args.file, args.rows, days=30, start="2025-04-01")
        print(f"generated {n:,} rows in {time.perf_counter() - t0:.1f}s -> {args.file} "
              f"({args.file.stat().st_size / 1e6:.0f} MB)")

    def raw() -> int:
        con = duckdb.connect()
        return con.execute(f"select * from read_csv('{args.file}')").to_arrow_table().num_rows

    def ours() -> int:
        out = litellm_spend_logs.parse_csv(args.file)
        assert not out.rejects, out.rejects[:3]
        return out.tables["api_requests"].num_rows

    t_raw, n_raw = _best(raw, args.repeat)
    t_ours, n_ours = _best(ours, args.repeat)
    assert n_raw == n_ours, (n_raw, n_ours)
    print(f"rows: {n_ours:,}")
    print(f"duckdb read_csv -> arrow : {t_raw:6.2f}s  {n_raw / t_raw:12,.0f} rows/s")
    print(f"litellm_spend_logs.parse : {t_ours:6.2f}s  {n_ours / t_ours:12,.0f} rows/s")
    print(f"ratio parse / raw read   : {t_ours / t_raw:6.2f}x")


if __name__ == "__main__":
    main()
