"""Full-refresh benchmark: generate `fleet-<gpus>-<days>`, run the nightly job once, compare.

    .venv/bin/python perf/bench_refresh.py                      # 64 GPUs x 7 days (minutes)
    .venv/bin/python perf/bench_refresh.py --sizes 64x7,256x30  # several fleets, one run, marginal ratio
    .venv/bin/python perf/bench_refresh.py --gpus 1000 --days 30  # fleet-1k-30d: 43.2M DCGM rows,
                                                                       # ~8 GB of CSV; budget an hour+
                                                                       # and tens of GB of disk

Per fleet: (1) generate the inputs folder under --dir (reused when it exists); (2) time a plain
DuckDB read of every input file (read_csv for CSV/TXT, read_json_objects for JSON, a read of the
YAML text) -- the floor any loader pays; (3) run `pipelines.cli.execute_refresh(home, inputs)`
(landing, parsing, raw loads, dbt, checks, publish) on a fresh home and time it; (4) print one row:
files, rows, raw read s, refresh s, ratio refresh/raw, peak RSS.

Peak RSS is per fleet: each refresh runs in its own child process (this script with `--child`),
which reports the larger of its own peak and its largest subprocess's (dbt). The clock starts inside
the child, just before `execute_refresh`. CPU seconds (user + system), `uptime`'s load average and a
speed probe (the seconds of a fixed Python loop, `speed_probe`) are printed beside wall seconds, which
depend on what else runs and on how fast the shared box is at the time. With several `--sizes`, the last
line is the marginal ratio `(refresh_b - refresh_a) / (raw_b - raw_a)` between the first and the
last fleet, on wall and CPU seconds.

`--next-day`: the full refresh loads days 1..D-1 only (a folder of hard links without the last
day's per-day files: dcgm, sacct, LiteLLM logs), then the last day is added and the nightly refresh
is timed, then one more refresh with no new data; both print as table rows beside DuckDB's raw read
of the day's own files, with the targets they are held to. `--reuse-home` keeps the d1-(D-1) home
as `FLEET/home-base` and runs each next day on a working copy of it (perf/refresh_homes.py), so
`--repeat N` measures it N times and a year of history is refreshed in full once. With several
fleets, each round ends with the last fleet's next day over the first's (wall, CPU, dbt node-s).

Before any timed run, the venv's and the repo's Python is compiled to bytecode once (`compileall`,
what `pip install` does and uv leaves to the first import; up-to-date files are skipped): a machine
that sets PYTHONDONTWRITEBYTECODE never keeps the bytecode of an import, and each refresh then
compiled Dagster, dbt and great-expectations source again (~6 CPU s of a whole sample `gpu-ledger
run`, ~1.3 s wall of a timed next day), a cost no nightly run on a normal install pays.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import sysconfig
import time
from collections import Counter
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perf.refresh_homes import (
    compare_with_previous,
    copy_home,
    hold_back_last_day,
    land_by_link,
    link,
    published_fingerprint,
)
from tools.generate import generate
from warehouse.home import Home

BASE_RECORD = "base.json"  # in FLEET/home-base: the figures of the full refresh that built it
HEADER = (f"{'fleet':<22}{'files':>7}{'rows':>13}{'raw read s':>12}{'refresh s':>11}{'ratio':>8}"
          f"{'peak RSS MB':>13}  result")


def raw_read(inputs: Path) -> tuple[float, int, int, dict[str, int]]:
    """Seconds to read every input file with DuckDB's plain readers; (seconds, files, rows, rows per family)."""
    con = duckdb.connect()
    files = rows = 0
    per_family: Counter[str] = Counter()
    t0 = time.perf_counter()
    for p in sorted(inputs.rglob("*")):
        if not p.is_file() or p.name.startswith("."):
            continue
        files += 1
        n = 0
        if p.suffix in (".csv", ".txt"):
            delim = "|" if p.suffix == ".txt" else ","
            n = con.execute("select * from read_csv(?, delim=?, header=true, all_varchar=true)",
                            [str(p), delim]).to_arrow_table().num_rows
        elif p.suffix == ".json":
            n = con.execute("select * from read_json_objects(?)", [str(p)]).to_arrow_table().num_rows
        else:
            p.read_text(encoding="utf-8")
        rows += n
        per_family[p.relative_to(inputs).parts[0]] += n
    con.close()
    return time.perf_counter() - t0, files, rows, dict(sorted(per_family.items()))


def peak_rss_mb() -> float:
    """Peak RSS of this process or of its largest finished subprocess, MB."""
    self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(self_kb, child_kb) / 1024


def child(home: Path, inputs: Path) -> None:
    """Run one refresh in this (fresh) process and print its figures as one JSON line."""
    from pipelines.cli import execute_refresh

    t0, c0 = time.perf_counter(), cpu_seconds()
    ok, run_id, reason = execute_refresh(home, inputs)
    seconds, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    try:  # seconds per stage, as `gpu-ledger run --profile` prints them
        profile = json.loads((home / "last_refresh.json").read_text()).get("profile", {})
    except (OSError, ValueError):
        profile = {}
    nodes = dbt_node_seconds(home)
    if ok:  # a benchmark of refused inputs measures nothing: say so instead of publishing its figures
        refused = refused_inputs(home / "ledger.duckdb", run_id)
        if refused:
            ok, reason = False, f"{refused} input files were refused as unreadable (audit.file_loads)"
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    largest_child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"ok": ok, "reason": reason, "seconds": seconds, "cpu_s": cpu, "peak_rss_mb": peak_rss_mb(),
                      "rss_own_mb": own, "rss_child_mb": largest_child, "profile": profile,
                      "dbt_nodes": nodes}))


def refused_inputs(ledger: Path, run_id: str) -> int:
    """Input files the run `run_id` refused as unreadable (audit.file_loads): this refresh's (or, with no new
    data, those of the run it kept), not every refusal the home ever recorded."""
    con = duckdb.connect(str(ledger), read_only=True)
    try:
        return con.execute("select count(*) from audit.file_loads where status = 'unreadable' and run_id = ?",
                           [run_id]).fetchone()[0]
    finally:
        con.close()


def dbt_node_seconds(home: Path, top: int = 8) -> dict:
    """The dbt build's slowest nodes (seconds each, from the home's run_results.json) and the total."""
    try:
        results = json.loads((home / "dbt-target" / "run_results.json").read_text())["results"]
    except (OSError, ValueError, KeyError):
        return {}
    times = sorted(((r["unique_id"].split(".")[-1], r["execution_time"]) for r in results), key=lambda x: -x[1])
    return {"nodes": len(times), "total_s": sum(t for _, t in times), "top": times[:top]}


def print_dbt_nodes(label: str, r: dict) -> None:
    """One line: the dbt build's node count, node-seconds and slowest nodes."""
    nodes = r.get("dbt_nodes") or {}
    if nodes:
        print(f"{label} dbt nodes: {nodes['nodes']} nodes, {nodes['total_s']:.1f} node-s; slowest: "
              + ", ".join(f"{name} {sec:.1f}" for name, sec in nodes["top"]), flush=True)


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and its finished subprocesses (dbt)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def load_average() -> str:
    """The 1/5/15-minute load averages, as `uptime` prints them."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def speed_probe() -> float:
    """Seconds a fixed pure-Python loop (10M additions) takes now: the box's speed drifts by up to 1.5x within
    hours (other tenants), which moves wall and CPU seconds alike; this says how fast it was before a run."""
    began, total = time.perf_counter(), 0
    for i in range(10_000_000):
        total += i
    return time.perf_counter() - began


def compile_bytecode() -> float:
    """Compile the venv's and the repo's Python to bytecode (skipping what is up to date); seconds taken."""
    began = time.monotonic()
    repo = Path(__file__).resolve().parent.parent
    packages = [str(repo / d) for d in ("pipelines", "warehouse", "sources", "reporting", "dashboards", "tools")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", sysconfig.get_paths()["purelib"], *packages],
                   check=False, capture_output=True)
    return time.monotonic() - began


def run_refresh(home: Path, inputs: Path, fresh: bool = True) -> dict:
    """One refresh of `inputs` into `home` (emptied first when `fresh`), in a child process; its JSON figures."""
    if fresh:
        shutil.rmtree(home, ignore_errors=True)
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", str(home), str(inputs)],
                          check=False, capture_output=True, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {"ok": False, "reason": f"child exited {proc.returncode}: {proc.stderr[-2000:]}", "seconds": float("nan"),
            "cpu_s": float("nan"), "peak_rss_mb": float("nan")}


def next_day(base: Path, name: str, inputs: Path, held: list[Path], reuse: bool) -> dict:
    """Add the held-back day and time the incremental refresh, then a refresh with no new data.
    With `reuse`, both run on a fresh working copy of the kept base home, and the day is taken out of
    the view again afterwards, so the next measurement starts from the same d1-(N-1) state."""
    fleet = base / name
    home = fleet / "home"
    if reuse:
        t0 = time.perf_counter()
        symbolic = json.loads((fleet / "home-base" / BASE_RECORD).read_text()).get("link_landing", False)
        linked, copied = copy_home(fleet / "home-base", home, symbolic)
        print(f"{name}: working copy of the base home in {time.perf_counter() - t0:.1f} s ({linked} files "
              f"hard-linked, {copied / 1e6:,.0f} MB copied)", flush=True)
    for src in held:
        link(src, inputs / src.parent.name / src.name)
    runs = {}
    try:
        for label in ("next-day incremental", "no new data"):
            print(f"{name} {label}: load average before {load_average()}, speed probe {speed_probe():.2f} s",
                  flush=True)
            runs[label] = r = run_refresh(home, inputs, fresh=False)
            print(f"{name} {label}: {r['seconds']:.1f} s ({r['cpu_s']:.1f} CPU s), peak RSS {r['peak_rss_mb']:,.0f} MB, "
                  f"{'published' if r['ok'] else 'FAILED: ' + r['reason']}; load average after {load_average()}",
                  flush=True)
            stages = r.get("profile", {}).get("stages_s", {})
            print(f"{name} {label} stages (s): " + ", ".join(f"{k} {v:.1f}" for k, v in stages.items()), flush=True)
            if label != "no new data":  # that run ends before dbt: run_results.json is the previous run's
                print_dbt_nodes(f"{name} {label}", r)
            if label == "next-day incremental" and r["ok"]:
                how = "a copy of the kept base home" if reuse else "the home of this run's full refresh"
                print(f"{name} next-day result: " + compare_with_previous(
                    fleet / "next-day-published.json", published_fingerprint(home / "serving.duckdb"), how),
                      flush=True)
    finally:
        if reuse:
            for src in held:
                (inputs / src.parent.name / src.name).unlink(missing_ok=True)
    inc, idle = runs["next-day incremental"], runs["no new data"]
    print(f"next-day incremental / no-new-data refresh: {inc['seconds']:.1f} / {idle['seconds']:.1f} = "
          f"{inc['seconds'] / idle['seconds']:.2f}x (CPU {inc['cpu_s'] / idle['cpu_s']:.2f}x)")
    # The day's own files read by DuckDB: the floor of the next-day target (<= 2 x (this + 3 s)).
    day = fleet / "day-inputs"
    shutil.rmtree(day, ignore_errors=True)
    for src in held:
        (day / src.parent.name).mkdir(parents=True, exist_ok=True)
        (day / src.parent.name / src.name).symlink_to(src)
    t_raw, files, rows, _ = raw_read(day)
    out = []
    for label, r in (("next day", inc), ("no new data", idle)):
        out.append({"name": f"{name} {label}", "files": files, "rows": rows, "raw_s": t_raw,
                    "refresh_s": r["seconds"], "cpu_s": r["cpu_s"], "peak_rss_mb": r["peak_rss_mb"], "ok": r["ok"],
                    "reason": r.get("reason", ""), "node_s": (r.get("dbt_nodes") or {}).get("total_s", float("nan")),
                    # a refresh that found nothing new says so in its profile (pipelines/outcome.py)
                    "result": "no new data" if "no-new-data check" in r.get("profile", {}).get("stages_s", {})
                    else None})
    print()
    print(HEADER)
    for row in out:
        print(format_row(row))
    print(f"next-day target: {inc['seconds']:.1f} s <= 6 s and <= 2 x ({t_raw:.1f} + 3) = {2 * (t_raw + 3):.1f} s; "
          f"no new data: {idle['seconds']:.1f} s <= 3 s", flush=True)
    return {"next day": out[0], "no new data": out[1]}


def print_history_ratio(rounds: list[list[dict]]) -> None:
    """Per round: the last fleet's next day against the first's (the 365-day target: within 1.5x)."""
    print()
    print(HEADER)
    for results in rounds:
        for res in results:
            print(format_row(res["next day"]))
    for i, results in enumerate(rounds, 1):
        a, b = results[0]["next day"], results[-1]["next day"]
        print(f"round {i}: next day {b['name']} / {a['name']}: {b['refresh_s']:.1f} / {a['refresh_s']:.1f} s = "
              f"{b['refresh_s'] / a['refresh_s']:.2f}x; CPU {b['cpu_s']:.1f} / {a['cpu_s']:.1f} = "
              f"{b['cpu_s'] / a['cpu_s']:.2f}x; dbt node-s {b['node_s']:.1f} / {a['node_s']:.1f} = "
              f"{b['node_s'] / a['node_s']:.2f}x (target: within 1.5x)", flush=True)


def docs_up_to_date(home: Path) -> str:
    """Bring the home's dbt docs site to the current manifest, as the nightly job's docs step does. A base
    refresh that finds no new data (the same project code) ends before that step, so after a re-parse of the
    project every next day copied from the base regenerated the site (2.2-2.3 s a round at fleet-256-30)."""
    from pipelines.defs.publish.docs import refresh_docs

    paths = Home(home)
    _generated, ok, message = refresh_docs(paths.ledger_db, paths.dbt_docs, parse_state=paths.dbt_target)
    return message if ok else f"NOT UPDATED: {message}"


def refresh_base(base: Path, name: str, inputs: Path) -> None:
    """Run the d1-(N-1) refresh again on the kept base itself, at the path it was built at: after a code
    change, the one rebuild a deployment's first night pays, so the next days measure the new code only."""
    fleet = base / name
    shutil.rmtree(fleet / "home", ignore_errors=True)  # the last measurement's working copy
    (fleet / "home-base").rename(fleet / "home")
    try:
        r = run_refresh(fleet / "home", inputs, fresh=False)
        docs = docs_up_to_date(fleet / "home")
    finally:
        (fleet / "home").rename(fleet / "home-base")
    print(f"{name}: base home refreshed with this code in {r['seconds']:.1f} s ({r['cpu_s']:.1f} CPU s), "
          f"{'published' if r['ok'] else 'FAILED: ' + r['reason']}; dbt docs {docs}", flush=True)
    print_dbt_nodes(f"{name} base refresh", r)


def bench_fleet(base: Path, gpus: int, days: int, teams: int, seed: int, hold_back: bool = False,
                reuse: bool = False, read_raw: bool = True, link_landing: bool = False) -> dict:
    """Generate (if needed), raw-read and refresh one fleet; print and return its row. With `reuse`
    (and `hold_back`), a base home kept by an earlier run is used as it is, else the new one is kept."""
    name = f"fleet-{gpus}-{days}"
    fleet = base / name
    inputs, home, kept = fleet / "inputs", fleet / "home", fleet / "home-base"
    if not (inputs / ".done").exists():
        t0 = time.perf_counter()
        counts = generate(inputs, gpus, days, teams, seed)
        (inputs / ".done").touch()
        size = sum(p.stat().st_size for p in inputs.rglob("*") if p.is_file()) / 1e6
        gen_s = time.perf_counter() - t0
        print(f"generated {name}: {sum(counts.values()):,} rows, {size:,.0f} MB in {gen_s:.1f} s "
              f"({sum(counts.values()) / gen_s:,.0f} rows/s)", flush=True)
    # The `.done` marker is a hidden file: landing skips it (warehouse.landing.input_files).
    held: list[Path] = []
    if hold_back:
        view = fleet / "next-day-inputs"
        held = hold_back_last_day(inputs, view)
        inputs = view
        name = f"{name} d1-{days - 1}"
        if reuse and (kept / BASE_RECORD).exists():
            row = json.loads((kept / BASE_RECORD).read_text())
            print(f"{name}: reusing the base home kept at {kept} (full refresh {row['refresh_s']:.1f} s, "
                  f"{row['refresh_cpu_s']:.1f} CPU s, {row['built']})", flush=True)
            return {**row, "inputs": inputs, "held": held}
        print(f"{name}: full refresh without the last day ({len(held)} files held back for --next-day)", flush=True)
    print(f"{name}: load average before {load_average()}, speed probe {speed_probe():.2f} s", flush=True)
    t_raw = raw_cpu = float("nan")
    files = rows = 0
    per_family: dict[str, int] = {}
    if read_raw:
        c0 = time.process_time()
        t_raw, files, rows, per_family = raw_read(inputs)
        raw_cpu = time.process_time() - c0
        print(f"{name} raw read: {files} files, {rows:,} rows in {t_raw:.1f} s ({raw_cpu:.1f} CPU s); rows per "
              "family: " + ", ".join(f"{k} {v:,}" for k, v in per_family.items()), flush=True)
    load_before = load_average()
    shutil.rmtree(home, ignore_errors=True)
    if link_landing:
        t0 = time.perf_counter()
        n = land_by_link(home, inputs)
        print(f"{name}: {n} inputs landed by hard link in {time.perf_counter() - t0:.1f} s (not in refresh s)", flush=True)
    r = run_refresh(home, inputs, fresh=False)
    row = {"name": name, "files": files, "rows": rows, "raw_s": t_raw, "refresh_s": r["seconds"],
           "raw_cpu_s": raw_cpu, "refresh_cpu_s": r["cpu_s"],
           "peak_rss_mb": r["peak_rss_mb"], "ok": r["ok"], "reason": r["reason"], "per_family": per_family}
    print(f"{name} refresh: {r['seconds']:.1f} s ({r['cpu_s']:.1f} CPU s), peak RSS {r['peak_rss_mb']:,.0f} MB "
          f"(refresh process {r.get('rss_own_mb', float('nan')):,.0f}, largest subprocess {r.get('rss_child_mb', float('nan')):,.0f}), "
          f"{'published' if r['ok'] else 'FAILED: ' + r['reason']}; load average after {load_average()}", flush=True)
    stages = r.get("profile", {}).get("stages_s", {})
    if stages:
        print(f"{name} stages (s): " + ", ".join(f"{k} {v:.1f}" for k, v in stages.items()), flush=True)
    print_dbt_nodes(name, r)
    if hold_back and reuse and r["ok"]:
        shutil.rmtree(kept, ignore_errors=True)
        home.rename(kept)  # measurements copy it back to `home`, the path its files name
        (kept / BASE_RECORD).write_text(json.dumps({**row, "built": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
                                                    + f", load {load_before} -> {load_average()}",
                                                    "link_landing": link_landing}))
        print(f"{name}: base home kept at {kept}", flush=True)
    return {**row, "inputs": inputs, "held": held}


def format_row(r: dict) -> str:
    """One table line of a fleet's figures."""
    read = r["raw_s"] == r["raw_s"]  # NaN: the raw read was skipped (--skip-raw-read)
    files, rows = (f"{r['files']}", f"{r['rows']:,}") if read else ("-", "-")
    raw, ratio = (f"{r['raw_s']:.1f}", f"{r['refresh_s'] / r['raw_s']:.1f}x") if read else ("-", "-")
    return (f"{r['name']:<22}{files:>7}{rows:>13}{raw:>12}{r['refresh_s']:>11.1f}{ratio:>8}{r['peak_rss_mb']:>13,.0f}  "
            f"{r.get('result') or ('published' if r['ok'] else 'FAILED: ' + r['reason'])}")


def parse_sizes(text: str) -> list[tuple[int, int]]:
    """'64x7,256x30' -> [(64, 7), (256, 30)]."""
    out = []
    for part in text.split(","):
        gpus, _, days = part.strip().lower().partition("x")
        if not (gpus.isdigit() and days.isdigit()):
            raise argparse.ArgumentTypeError(f"size {part!r} is not GPUSxDAYS (e.g. 64x7)")
        out.append((int(gpus), int(days)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=64)
    ap.add_argument("--days", type=int, default=7)
    ap.add_argument("--sizes", type=parse_sizes, default=None,
                    help="several fleets in one run, e.g. 64x7,256x30 (overrides --gpus/--days)")
    ap.add_argument("--teams", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/gpu-ledger-bench"))
    ap.add_argument("--next-day", action="store_true",
                    help="full refresh without the last day, then time adding it and a no-new-data refresh; with "
                         "several fleets, also the last fleet's next day over the first's")
    ap.add_argument("--reuse-home", action="store_true",
                    help="with --next-day: keep the d1-(N-1) home as FLEET/home-base (reused when it exists) and "
                         "measure each next day on a working copy of it")
    ap.add_argument("--refresh-base", action="store_true",
                    help="with --reuse-home: refresh the kept base with this code first (after a code change)")
    ap.add_argument("--repeat", type=int, default=1, help="with --reuse-home: next-day measurements per fleet")
    ap.add_argument("--skip-raw-read", action="store_true",
                    help="skip DuckDB's raw read of the full refresh's inputs (minutes on a year of history)")
    ap.add_argument("--link-landing", action="store_true",
                    help="land the full refresh's inputs by hard link first (perf/refresh_homes.py land_by_link): "
                         "half the disk, its landing not measured")
    ap.add_argument("--child", nargs=2, type=Path, metavar=("HOME", "INPUTS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return

    sizes = args.sizes or [(args.gpus, args.days)]
    print(f"bytecode compiled (compileall) in {compile_bytecode():.1f} s", flush=True)
    if (args.reuse_home or args.refresh_base or args.repeat > 1) and not args.next_day:
        ap.error("--reuse-home, --refresh-base and --repeat go with --next-day")
    if (args.refresh_base or args.repeat > 1) and not args.reuse_home:
        ap.error("--refresh-base and --repeat need --reuse-home (a home takes the next day once)")
    rows = [bench_fleet(args.dir, g, d, args.teams, args.seed, args.next_day, args.reuse_home, not args.skip_raw_read,
                        args.link_landing) for g, d in sizes]
    print()
    print(HEADER)
    for r in rows:
        print(format_row(r))
    if len(rows) >= 2 and not args.next_day:
        a, b = rows[0], rows[-1]
        marginal = (b["refresh_s"] - a["refresh_s"]) / (b["raw_s"] - a["raw_s"])
        print(f"marginal ratio {a['name']} -> {b['name']}: ({b['refresh_s']:.1f} - {a['refresh_s']:.1f}) / "
              f"({b['raw_s']:.1f} - {a['raw_s']:.1f}) = {marginal:.2f}x")
        cpu = (b["refresh_cpu_s"] - a["refresh_cpu_s"]) / (b["raw_cpu_s"] - a["raw_cpu_s"])
        print(f"marginal ratio on CPU seconds: ({b['refresh_cpu_s']:.1f} - {a['refresh_cpu_s']:.1f}) / "
              f"({b['raw_cpu_s']:.1f} - {a['raw_cpu_s']:.1f}) = {cpu:.2f}x")
    if not args.next_day or not all(r["ok"] for r in rows):
        return
    names = [f"fleet-{g}-{d}" for g, d in sizes]
    if args.refresh_base:
        for name, r in zip(names, rows):
            refresh_base(args.dir, name, r["inputs"])
    rounds = [[next_day(args.dir, name, r["inputs"], r["held"], args.reuse_home) for name, r in zip(names, rows)]
              for _ in range(args.repeat)]
    if len(names) >= 2:
        print_history_ratio(rounds)


if __name__ == "__main__":
    main()
