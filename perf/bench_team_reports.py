"""Team reports: seconds to write every team's and month's report from a published serving.duckdb.

    .venv/bin/python perf/bench_team_reports.py --home /tmp/gpu-ledger-bench/fleet-256-365/home --repeat 3

Writes the reports (`reporting.team_reports.write_team_reports`, as the refresh's `team_reports` step does)
into a scratch folder --repeat times and prints the best and median seconds, the reports and files written,
and the seconds per report. The home is only read. Use bench_refresh.py first to produce a home with a
publication (a 365-day one: `--sizes 256x365 --next-day --reuse-home`, then its `FLEET/home`).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reporting.team_reports import write_team_reports


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True, help="a home with a publication (serving.duckdb)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    serving = args.home / "serving.duckdb"
    if not serving.exists():
        sys.exit(f"{serving}: no publication; run perf/bench_refresh.py first")
    seconds: list[float] = []
    with tempfile.TemporaryDirectory(prefix="team-reports-") as out:
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            written = write_team_reports(serving, Path(out))
            seconds.append(time.perf_counter() - t0)
    reports = sum(1 for p in written if p.suffix == ".html" and p.name != "index.html")
    best = min(seconds)
    print(f"{serving}: {reports} reports, {len(written)} files; best {best:.3f} s, median "
          f"{statistics.median(seconds):.3f} s of {args.repeat}; {1000 * best / max(reports, 1):.1f} ms per report")


if __name__ == "__main__":
    main()
