"""Where the wall-clock of a home's last refresh went, in order: its Dagster steps, the dbt build's start,
node window and end, and the chain of dbt nodes that set the build's length.

    .venv/bin/python perf/refresh_timeline.py --home HOME [--run RUN_ID] [--chain 25]

Reads what a refresh leaves behind, runs nothing: the home's Dagster event log (step starts and ends),
`HOME/dbt-target/run_results.json` (each node's compile and execute times, its thread) and the project's
manifest (which node waits for which: in `dbt build` a node waits for its parents and for the tests of
its parents). The chain is found backwards from the node that ended last: each step goes to the blocker
that ended last before it started; `gap` is the time between that blocker's end and the node's start
(dbt's scheduling, and a thread free to take it). A figure here is one run's: compare runs, not single
figures (BENCHMARKS.md says how noisy this machine is).
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _ts(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def step_times(home: Path, run_id: str | None) -> tuple[str, float, list[tuple[str, float, float]]]:
    """(run id, the run's start, [(step, start, end)] in start order) from the home's Dagster instance."""
    import dagster as dg

    from pipelines.dagster_storage import home_instance
    from pipelines.profile import step_spans

    if not (home / "dagster" / "dagster.yaml").is_file():  # read only: never create an instance
        sys.exit(f"no Dagster instance in {home / 'dagster'}: no refresh ran in {home}")
    with home_instance(home / "dagster") as instance:
        if run_id is None:
            runs = instance.get_runs(limit=1)
            if not runs:
                sys.exit(f"no Dagster run in {home / 'dagster'}")
            run_id = runs[0].run_id
        kinds = {dg.DagsterEventType.RUN_START, dg.DagsterEventType.STEP_START, dg.DagsterEventType.STEP_SUCCESS,
                 dg.DagsterEventType.STEP_FAILURE}
        records = [r.event_log_entry for r in instance.get_records_for_run(run_id, of_type=kinds).records]
    if not records:
        sys.exit(f"no events of run {run_id} in {home / 'dagster'}")
    run_start = min(e.timestamp for e in records)
    return run_id, run_start, sorted(step_spans(records), key=lambda s: s[1])


def node_times(run_results: dict[str, Any]) -> dict[str, tuple[float, float, str]]:
    """{unique_id: (start, end, thread)}: from the node's compile start to its execute end. The run's hooks
    (`operation` nodes, on dbt's main thread before and after every node) are left out."""
    out = {}
    for r in run_results.get("results", []):
        if str(r.get("unique_id", "")).startswith("operation."):
            continue
        timing = {t["name"]: t for t in r.get("timing", []) if t.get("started_at") and t.get("completed_at")}
        if "execute" in timing:
            start = _ts(timing.get("compile", timing["execute"])["started_at"])
            out[r["unique_id"]] = (start, _ts(timing["execute"]["completed_at"]), str(r.get("thread_id", "")))
    return out


def blockers(manifest: dict[str, Any], ran: set[str]) -> dict[str, set[str]]:
    """What each node that ran waited for in `dbt build`: its parents that ran, and their tests that ran."""
    nodes = manifest.get("nodes", {})
    parents = {uid: {p for p in nodes.get(uid, {}).get("depends_on", {}).get("nodes", []) if p in ran} for uid in ran}
    tests_of: dict[str, set[str]] = {}
    for uid in ran:
        if uid.startswith("test."):
            for p in parents[uid]:
                tests_of.setdefault(p, set()).add(uid)
    return {uid: ps | {t for p in ps if not uid.startswith("test.") for t in tests_of.get(p, ())} for uid, ps in parents.items()}


def critical_chain(times: dict[str, tuple[float, float, str]], blocked_by: dict[str, set[str]]) -> list[str]:
    """The nodes from the last to end back to the start, each the blocker that ended last before the next."""
    if not times:
        return []
    chain = [max(times, key=lambda u: times[u][1])]
    while True:
        start = times[chain[-1]][0]
        before = [b for b in blocked_by.get(chain[-1], ()) if times[b][1] <= start + 1e-3]
        if not before:
            return chain[::-1]
        chain.append(max(before, key=lambda b: times[b][1]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, required=True, help="a warehouse home a refresh ran in")
    parser.add_argument("--run", default=None, help="a Dagster run id (default: the home's last run)")
    parser.add_argument("--chain", type=int, default=25, help="how many nodes of the chain to list (the longest)")
    args = parser.parse_args(argv)
    from pipelines.dbt_parse import require_manifest

    run_id, run_start, steps = step_times(args.home, args.run)
    if not steps:
        sys.exit(f"run {run_id} has no finished step")
    print(f"run {run_id}: {steps[-1][2] - run_start:.2f} s from the run's start to its last step's end")
    print(f"{'step':<34} {'start s':>8} {'seconds':>8}")
    for name, start, end in steps:
        print(f"{name:<34} {start - run_start:8.2f} {end - start:8.2f}")
    between = (steps[-1][2] - steps[0][1]) - sum(end - start for _, start, end in steps)
    print(f"{'between steps':<34} {'':>8} {between:8.2f}")
    dbt_step = next((s for s in steps if s[0] == "ledger_dbt_assets"), None)
    results_path = args.home / "dbt-target" / "run_results.json"
    if dbt_step is None or not results_path.exists():
        return
    times = node_times(json.loads(results_path.read_text()))
    if not times:
        return
    first, last = min(t[0] for t in times.values()), max(t[1] for t in times.values())
    node_s = sum(end - start for start, end, _ in times.values())
    threads = len({t[2] for t in times.values()})
    print(f"\ndbt build ({len(times)} nodes, {node_s:.2f} node-s on {threads} threads):")
    print(f"  step start -> first node        {first - dbt_step[1]:6.2f} s  (the command's start)")
    print(f"  first node -> last node end     {last - first:6.2f} s")
    print(f"  last node end -> step end       {dbt_step[2] - last:6.2f} s  (the command's end, its checkpoint, "
          "recording the tests)")
    chain = critical_chain(times, blockers(json.loads(require_manifest().read_text()), set(times)))
    work = sum(times[u][1] - times[u][0] for u in chain)
    print(f"\nchain of {len(chain)} nodes: {work:.2f} s of node time and {last - first - work:.2f} s of gaps "
          f"over the {last - first:.2f} s window")
    rows = []
    for i, uid in enumerate(chain):
        start, end, _ = times[uid]
        gap = start - times[chain[i - 1]][1] if i else start - first
        rows.append((end - start, gap, uid))
    shown = sorted(rows, key=lambda r: -(r[0] + r[1]))[:args.chain]
    print(f"{'node':<60} {'seconds':>8} {'gap s':>7}")
    for seconds, gap, uid in [r for r in rows if r in shown]:
        print(f"{uid.split('.', 2)[-1][:60]:<60} {seconds:8.2f} {gap:7.2f}")


if __name__ == "__main__":
    main()
