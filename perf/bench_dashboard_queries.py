"""Dashboard query latency: p50/p95 of the typical queries over a published serving.duckdb.

    .venv/bin/python perf/bench_dashboard_queries.py --home /tmp/gpu-ledger-bench/fleet-64-7/home

Runs each query of `warehouse.serving` the app issues on page load (spend by team/provider/
workload, chargeback, invoice reconciliation, unit costs, utilisation, prices, stale prices,
checks, rejects) --repeat times, each through its own read-only connection as the app does,
and prints p50/p95 in milliseconds. A query whose table is not in this publication is listed
as skipped. Use bench_refresh.py first to produce a home with a publication.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from warehouse import serving as data

QUERIES = {
    "spend by team": lambda p: data.spend_by(p, "team"),
    "spend by provider": lambda p: data.spend_by(p, "provider"),
    "spend by GPU model": lambda p: data.spend_by(p, "gpu_model"),
    "spend by workload type": lambda p: data.spend_by(p, "workload_type"),
    "chargeback": lambda p: data.chargeback(p),
    "reconciliation": lambda p: data.reconciliation(p),
    "unit costs": lambda p: data.unit_costs(p),
    "utilisation": lambda p: data.utilisation(p),
    "prices": lambda p: data.prices(p),
    "stale prices": lambda p: data.stale_prices(p),
    "check results": lambda p: data.check_results(p),
    "rejects by source": lambda p: data.rejects_by_source(p),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True, help="a home with a published serving.duckdb")
    ap.add_argument("--repeat", type=int, default=30)
    args = ap.parse_args()
    path = data.serving_path(args.home)
    if not path.exists():
        sys.exit(f"{path} does not exist: run perf/bench_refresh.py first")
    print(f"{path} ({path.stat().st_size / 1e6:,.1f} MB)\n")
    print(f"{'query':<22}{'rows':>8}{'p50 ms':>9}{'p95 ms':>9}")
    for name, fn in QUERIES.items():
        try:
            rows = len(fn(path))
        except Exception as exc:  # noqa: BLE001 - a table not in this publication yet
            print(f"{name:<22}  skipped: {str(exc).splitlines()[0][:70]}")
            continue
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            fn(path)
            times.append((time.perf_counter() - t0) * 1000)
        q = statistics.quantiles(times, n=20)
        print(f"{name:<22}{rows:>8,}{statistics.median(times):>9.1f}{q[18]:>9.1f}")


if __name__ == "__main__":
    main()
