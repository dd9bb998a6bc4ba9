"""Time our FOCUS parse against plain DuckDB reads of the same generated export.

Usage: .venv/bin/python perf/bench_billing_ingest.py [--rows 1000000] [--dir /tmp]
Prints rows/s for: plain read_csv (typed, sniffed) -> arrow, our focus.parse on the CSV,
plain read_parquet -> arrow, our focus.parse on the Parquet, and the ratios.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sources.billing import focus
from tools.generate.bulk_focus import generate_focus_csv


def _time(fn) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    n = fn()
    return time.perf_counter() - t, n


def main() -> None:
    """Generate (if missing) and time."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--dir", type=Path, default=Path("/tmp"))
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()
    csv_path = a.dir / f"focus_bench_{a.rows}.csv"
    pq_path = a.dir / f"focus_bench_{a.rows}.parquet"
    for p in (csv_path, pq_path):
        if not p.exists():
            generate_focus_csv(p, a.rows, seed=42)
    print(f"rows={a.rows} csv={csv_path.stat().st_size / 1e6:.1f} MB parquet={pq_path.stat().st_size / 1e6:.1f} MB")

    def plain_csv() -> int:
        return duckdb.connect().execute(f"select * from read_csv('{csv_path}')").to_arrow_table().num_rows

    def plain_csv_varchar() -> int:
        return duckdb.connect().execute(f"select * from read_csv('{csv_path}', all_varchar=true)").to_arrow_table().num_rows

    def plain_pq() -> int:
        return duckdb.connect().execute(f"select * from read_parquet('{pq_path}')").to_arrow_table().num_rows

    def ours(p: Path):  # type: ignore[no-untyped-def]
        def run() -> int:
            out = focus.parse(p)
            assert not out.rejects, out.rejects[:3]
            return out.row_count()
        return run

    results = {}
    for name, fn in [("duckdb read_csv", plain_csv), ("duckdb read_csv all_varchar", plain_csv_varchar),
                     ("focus.parse csv", ours(csv_path)), ("duckdb read_parquet", plain_pq),
                     ("focus.parse parquet", ours(pq_path))]:
        best = min((_time(fn) for _ in range(a.repeat)), key=lambda r: r[0])
        results[name] = best[0]
        print(f"{name:30} {best[0]:7.2f} s  {best[1] / best[0]:>12,.0f} rows/s")
    print(f"ratio csv     ours/plain read_csv = {results['focus.parse csv'] / results['duckdb read_csv']:.2f}x")
    print(f"ratio parquet ours/plain read_parquet = {results['focus.parse parquet'] / results['duckdb read_parquet']:.2f}x")


if __name__ == "__main__":
    main()
