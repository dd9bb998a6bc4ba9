"""Benchmark: our dcgm_csv parser vs a plain DuckDB read_csv of the same file, same process.

    python perf/bench_usage_ingest.py [--gpus 64 --days 31 --file /tmp/dcgm_bench.csv]

Generates the file (tools/generate/bulk_dcgm.py) if missing, then times
  1. duckdb read_csv(auto) -> arrow  (the yardstick: DuckDB reading the raw file), and
  2. sources.usage.dcgm_csv.parse    (typing, sentinels, dedup and series checks, -> arrow),
each best of --repeat runs, and prints rows/s and the ratio parse/raw.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sources.usage import dcgm_csv
from tools.generate.bulk_dcgm import generate


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
    ap.add_argument("--gpus", type=int, default=64)
    ap.add_argument("--days", type=int, default=31)
    ap.add_argument("--file", type=Path, default=Path("/tmp/dcgm_bench_64x31.csv"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not args.file.exists():
        t0 = time.perf_counter()
        n = generate(args.file, args.gpus, args.days)
        print(f"generated {n:,} rows in {time.perf_counter() - t0:.1f}s -> {args.file} "
              f"({args.file.stat().st_size / 1e6:.0f} MB)")

    def raw() -> int:
        con = duckdb.connect()
        return con.execute(f"select * from read_csv('{args.file}')").to_arrow_table().num_rows

    def ours() -> int:
        out = dcgm_csv.parse(args.file)
        assert not out.rejects, out.rejects[:3]
        return out.tables["gpu_samples"].num_rows

    t_raw, n_raw = _best(raw, args.repeat)
    t_ours, n_ours = _best(ours, args.repeat)
    print(f"duckdb read_csv     : {n_raw:>10,} rows  {t_raw:6.2f} s  {n_raw / t_raw:>12,.0f} rows/s")
    print(f"dcgm_csv.parse      : {n_ours:>10,} rows  {t_ours:6.2f} s  {n_ours / t_ours:>12,.0f} rows/s")
    print(f"ratio parse/read_csv: {t_ours / t_raw:.2f}x")


if __name__ == "__main__":
    main()
