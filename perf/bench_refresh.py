"""Full-refresh benchmark: generate `fleet-<gpus>-<days>`, run the nightly job once, compare.

    .venv/bin/python perf/bench_refresh.py                      # 64 GPUs x 7 days (minutes)
    .venv/bin/python perf/bench_refresh.py --gpus 1000 --days 30  # fleet-1k-30d: 43.2M DCGM rows,
                                                                       # ~8 GB of CSV; budget an hour+
                                                                       # and tens of GB of disk

Steps: (1) generate the inputs folder under --dir (reused when it exists); (2) time a plain
DuckDB read of every input file (read_csv for CSV/TXT, read_json_objects for JSON, a read of the
YAML text) -- the floor any loader pays; (3) run `pipelines.cli.execute_refresh(home, inputs)`
(landing, parsing, raw loads, dbt, checks, publish) in this process and time it; (4) print total
time, the ratio refresh/raw-read, and peak RSS (getrusage: self + children, max of the two).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.generate import generate


def raw_read(inputs: Path) -> tuple[float, int, int]:
    """Seconds to read every input file with DuckDB's plain readers; (seconds, files, rows)."""
    con = duckdb.connect()
    files = rows = 0
    t0 = time.perf_counter()
    for p in sorted(inputs.rglob("*")):
        if not p.is_file():
            continue
        files += 1
        if p.suffix in (".csv", ".txt"):
            delim = "|" if p.suffix == ".txt" else ","
            rows += con.execute("select * from read_csv(?, delim=?, header=true, all_varchar=true)",
                                [str(p), delim]).to_arrow_table().num_rows
        elif p.suffix == ".json":
            rows += con.execute("select * from read_json_objects(?)", [str(p)]).to_arrow_table().num_rows
        else:
            p.read_text(encoding="utf-8")
    con.close()
    return time.perf_counter() - t0, files, rows


def peak_rss_mb() -> float:
    self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(self_kb, child_kb) / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=64)
    ap.add_argument("--days", type=int, default=7)
    ap.add_argument("--teams", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/gpu-ledger-bench"))
    args = ap.parse_args()

    name = f"fleet-{args.gpus}-{args.days}"
    inputs = args.dir / name / "inputs"
    home = args.dir / name / "home"
    if not (inputs / ".done").exists():
        t0 = time.perf_counter()
        counts = generate(inputs, args.gpus, args.days, args.teams, args.seed)
        (inputs / ".done").touch()
        size = sum(p.stat().st_size for p in inputs.rglob("*") if p.is_file()) / 1e6
        gen_s = time.perf_counter() - t0
        print(f"generated {name}: {sum(counts.values()):,} rows, {size:,.0f} MB in {gen_s:.1f} s "
              f"({sum(counts.values()) / gen_s:,.0f} rows/s)")
    (inputs / ".done").unlink(missing_ok=True)  # the marker must not land as an input
    try:
        t_raw, files, rows = raw_read(inputs)
        print(f"raw read: {files} files, {rows:,} rows in {t_raw:.1f} s")
        shutil.rmtree(home, ignore_errors=True)
        from pipelines.cli import execute_refresh

        t0 = time.perf_counter()
        ok, _run_id, reason = execute_refresh(home, inputs)
        t_refresh = time.perf_counter() - t0
    finally:
        (inputs / ".done").touch()
    print()
    print(f"{'fleet':<18}{'files':>7}{'rows':>13}{'raw read s':>12}{'refresh s':>11}{'ratio':>8}{'peak RSS MB':>13}  result")
    print(f"{name:<18}{files:>7}{rows:>13,}{t_raw:>12.1f}{t_refresh:>11.1f}{t_refresh / t_raw:>7.1f}x"
          f"{peak_rss_mb():>13,.0f}  {'published' if ok else 'FAILED: ' + reason}")


if __name__ == "__main__":
    main()
