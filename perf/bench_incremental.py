"""Incremental nightly benchmark: adding day N+1 to an N-day history vs adding day 2 to a 1-day history.

    .venv/bin/python perf/bench_incremental.py                    # 32 GPUs, N = 14 (~10 min)
    .venv/bin/python perf/bench_incremental.py --gpus 1000 --days 365 --dir /big/disk
        # 1,000 GPUs x 365 days: 525M DCGM rows (~100 GB of CSV, one file per day); generation and the
        # untimed N-day history load take hours and a few hundred GB of disk (landing copy + warehouse).
        # Add --no-full to skip the full-rebuild comparison run.

The fleet is generated once for N+1 days (`tools.generate`, reused under --dir). Per-day files
(usage/dcgm_<day>.csv, usage/sacct_<day>.txt, api_spend/litellm_spend_logs_<day>.csv) are what a
nightly delivery adds; the rest (the month's billing export, registry, prices, benchmarks) is in the
inputs folder from the start in both scenarios, so the two timed refreshes differ only in history.

  small: refresh with day 1 (untimed), add day 2, time the refresh.
  large: refresh with days 1..N (untimed), add day N+1, time the refresh.
  full:  then `--full-refresh` on the large home: what every night cost before (optional).

Each timed figure is one `pipelines.cli.execute_refresh` in this process (landing, raw loads, dbt,
checks, publish), and, from the run's dbt log, the dbt total and the seconds of the incremental
telemetry model (int_gpu_telemetry_hourly) and of int_gpu_usage_hourly, which reads it. The ratio
large/small is the yardstick: 1.0 means a night costs what the new day costs, whatever the history.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import time
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.generate import generate

START = date(2025, 4, 1)
DAILY = re.compile(r"^(dcgm|sacct|litellm_spend_logs)_(\d{4}-\d{2}-\d{2})\.(csv|txt)$")
MODEL_TIME = re.compile(r"OK created sql \w+ model \w+\.(\w+) \.*\s*\[.*?in ([\d.]+)s\]")
DBT_TOTAL = re.compile(r"Finished running .* \(([\d.]+)s\)")


def inputs_through(fleet: Path, inputs: Path, last_day: date) -> None:
    """Copy the fleet to `inputs`, keeping per-day files only up to `last_day`."""
    shutil.rmtree(inputs, ignore_errors=True)
    for src in sorted(fleet.rglob("*")):
        if not src.is_file() or src.name == ".done":
            continue
        m = DAILY.match(src.name)
        if m and date.fromisoformat(m.group(2)) > last_day:
            continue
        dst = inputs / src.relative_to(fleet)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dst)


def add_day(fleet: Path, inputs: Path, day: date) -> None:
    for src in sorted(fleet.rglob(f"*_{day.isoformat()}.*")):
        if DAILY.match(src.name):
            shutil.copy(src, inputs / src.relative_to(fleet))


def refresh(home: Path, inputs: Path, **options: object) -> dict[str, float]:
    """One timed refresh; seconds overall, of dbt, and of the two telemetry models."""
    from pipelines.cli import execute_refresh

    t0 = time.perf_counter()
    ok, _run_id, reason = execute_refresh(home, inputs, **options)
    seconds = time.perf_counter() - t0
    if not ok:
        raise SystemExit(f"refresh failed: {reason}")
    log = (home / "logs" / "last_run.log").read_text(errors="replace")
    log = re.sub(r"\x1b\[[0-9;]*m", "", log)
    models = {m.group(1): float(m.group(2)) for m in MODEL_TIME.finditer(log)}
    total = DBT_TOTAL.search(log)
    return {
        "refresh": seconds,
        "dbt": float(total.group(1)) if total else float("nan"),
        "telemetry_hourly": models.get("int_gpu_telemetry_hourly", float("nan")),
        "usage_hourly": models.get("int_gpu_usage_hourly", float("nan")),
    }


def scenario(fleet: Path, work: Path, history_days: int) -> tuple[Path, Path, dict[str, float]]:
    """Load `history_days` days (untimed), then time adding the next day."""
    inputs, home = work / "inputs", work / "home"
    shutil.rmtree(home, ignore_errors=True)
    inputs_through(fleet, inputs, START + timedelta(days=history_days - 1))
    refresh(home, inputs)
    add_day(fleet, inputs, START + timedelta(days=history_days))
    return inputs, home, refresh(home, inputs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=32)
    ap.add_argument("--days", type=int, default=14, help="N: days of history before the added day")
    ap.add_argument("--teams", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/gpu-ledger-bench"))
    ap.add_argument("--no-full", action="store_true", help="skip the full-rebuild comparison")
    args = ap.parse_args()

    name = f"fleet-{args.gpus}-{args.days + 1}"
    fleet = args.dir / name / "inputs"
    if not (fleet / ".done").exists():
        t0 = time.perf_counter()
        counts = generate(fleet, args.gpus, args.days + 1, args.teams, args.seed)
        (fleet / ".done").touch()
        print(f"generated {name}: {sum(counts.values()):,} rows in {time.perf_counter() - t0:.1f} s")
    dcgm_rows = args.gpus * 1440
    work = args.dir / name / "incremental"

    rows = []
    _, _, small = scenario(fleet, work / "small", 1)
    rows.append(("add day 2 to 1 day", small))
    _, home, large = scenario(fleet, work / "large", args.days)
    rows.append((f"add day {args.days + 1} to {args.days} days", large))
    if not args.no_full:
        inputs = work / "large" / "inputs"
        rows.append((f"full rebuild of {args.days + 1} days", refresh(home, inputs, full_refresh=True)))

    print(f"\n{name}: {args.gpus} GPUs, {dcgm_rows:,} DCGM rows per day")
    print(f"{'scenario':<28}{'refresh s':>11}{'dbt s':>9}{'telemetry_hourly s':>20}{'usage_hourly s':>16}")
    for label, r in rows:
        print(f"{label:<28}{r['refresh']:>11.1f}{r['dbt']:>9.1f}{r['telemetry_hourly']:>20.2f}{r['usage_hourly']:>16.2f}")
    for key in ("refresh", "dbt", "telemetry_hourly"):
        print(f"ratio large/small ({key}): {large[key] / small[key]:.2f}x")
    if not args.no_full:
        full = rows[-1][1]
        print(f"full rebuild / incremental ({args.days + 1} days, telemetry_hourly): "
              f"{full['telemetry_hourly'] / large['telemetry_hourly']:.1f}x")


if __name__ == "__main__":
    main()
