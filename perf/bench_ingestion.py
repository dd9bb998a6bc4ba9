"""Ingestion benchmark: our parsers vs DuckDB's plain read_csv of the same files, same process.

    .venv/bin/python perf/bench_ingestion.py [--dcgm-rows 2000000 --billing-rows 500000
                                                    --api-rows 500000 --dir /tmp/gpu-ledger-bench]

For each bulk source family the files are generated once with tools/generate (reused when
present with the same size) and then timed, best of --repeat:
  raw   = duckdb read_csv(<file>) -> arrow (auto-detected dialect and types: the yardstick);
  ours  = the format's parse() (typing, checks, rejects, line numbers) -> arrow.
Prints rows/s of both and the ratio ours/raw (1.0 = as fast as DuckDB reading the file raw).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sources.catalog import recognise
from tools.generate.api_spend import write_litellm
from tools.generate.billing import write_billing
from tools.generate.fleet import build_fleet
from tools.generate.usage import write_dcgm


def _best(fn, repeat: int) -> tuple[float, int]:
    best, rows = float("inf"), 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        rows = fn()
        best = min(best, time.perf_counter() - t0)
    return best, rows


def _files(root: Path, family: str, rows: int) -> list[Path]:
    """Generate (or reuse) the family's files with about `rows` data rows."""
    folder = root / f"{family}-{rows}"
    done = folder / ".done"
    if done.exists():
        return sorted(p for p in folder.iterdir() if p.suffix == ".csv" and not p.name.startswith("invoice"))
    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if family == "usage":  # one day of 1-minute samples for rows/1440 GPUs
        write_dcgm(build_fleet(max(1, math.ceil(rows / 1440)), 1, 4, 0), folder)
    elif family == "billing":  # hourly instance lines: ~720 per node over 30 days
        gpus = max(8, round(rows / (30 * 24) * 8))
        write_billing(build_fleet(gpus, 30, 4, 0), folder)
    else:
        fleet = build_fleet(8, 1, 4, 0)
        write_litellm(folder / "litellm_spend_logs_bench.csv", rows, fleet.start, 30, 0, fleet.workload_team)
    files = sorted(p for p in folder.iterdir() if p.suffix == ".csv" and not p.name.startswith("invoice"))
    size = sum(p.stat().st_size for p in files) / 1e6
    print(f"generated {family}: {len(files)} file(s), {size:,.0f} MB in {time.perf_counter() - t0:.1f} s")
    done.touch()
    return files


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dcgm-rows", type=int, default=2_000_000)
    ap.add_argument("--billing-rows", type=int, default=500_000)
    ap.add_argument("--api-rows", type=int, default=500_000)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/gpu-ledger-bench"))
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()

    results = []
    for family, label, rows in (("billing", "billing FOCUS CSV", args.billing_rows),
                                ("usage", "usage dcgm_csv", args.dcgm_rows),
                                ("api_spend", "api_spend LiteLLM CSV", args.api_rows)):
        files = _files(args.dir, family, rows)
        fmts = [recognise(p, family) for p in files]

        def raw(files: list[Path] = files) -> int:
            con = duckdb.connect()
            try:
                return sum(con.execute("select * from read_csv(?)", [str(p)]).to_arrow_table().num_rows for p in files)
            finally:
                con.close()

        def ours(files: list[Path] = files, fmts: list = fmts) -> int:
            n = 0
            for p, fmt in zip(files, fmts):
                out = fmt.parse(p)
                assert not out.rejects, (p, out.rejects[:3])
                n += out.row_count()
            return n

        t_raw, n_raw = _best(raw, args.repeat)
        t_ours, n_ours = _best(ours, args.repeat)
        size = sum(p.stat().st_size for p in files) / 1e6
        results.append((label, fmts[0].name, n_ours, size, t_raw, n_raw / t_raw, t_ours, n_ours / t_ours, t_ours / t_raw))

    print()
    print(f"{'family':<24}{'format':<24}{'rows':>11}{'MB':>8}{'raw s':>8}{'raw rows/s':>12}"
          f"{'ours s':>8}{'ours rows/s':>13}{'ratio':>7}")
    for label, fmt, n, size, t_raw, r_raw, t_ours, r_ours, ratio in results:
        print(f"{label:<24}{fmt:<24}{n:>11,}{size:>8,.0f}{t_raw:>8.2f}{r_raw:>12,.0f}{t_ours:>8.2f}{r_ours:>13,.0f}"
              f"{ratio:>6.2f}x")


if __name__ == "__main__":
    main()
