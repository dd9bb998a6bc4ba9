"""`gpu-ledger decide`: one decision record for a workload, or one per workload plus an index (--all)."""

from __future__ import annotations

import typer
from rich.console import Console

from warehouse import serving
from warehouse.home import Home


def run_decide(console: Console, paths: Home, workload: str | None, every: bool) -> None:
    from reporting.decisions import DecisionDataMissing, write_all_records, write_decision_record

    if every == (workload is not None):
        console.print("[red]give either --workload W or --all[/red]")
        raise typer.Exit(2)
    known = [str(w) for w in serving.distinct(paths.serving_db, "dim_workload", "workload_id")]
    if every:
        if not known:
            console.print("[red]dim_workload is not published: no workloads to decide for[/red]")
            raise typer.Exit(1)
        index, written = write_all_records(paths.serving_db, paths.decisions, known)
        console.print(f"{len(written)} of {len(known)} decision records; index: {index}")
        if len(written) < len(known):
            raise typer.Exit(1)  # the index names what is missing for the rest
        return
    if known and workload not in known:
        console.print(f"[red]--workload {workload}: no such workload; workloads: {', '.join(known)}[/red]",
                      soft_wrap=True)
        raise typer.Exit(1)
    try:
        md, js = write_decision_record(paths.serving_db, paths.decisions, workload)
    except DecisionDataMissing as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(1) from exc
    appendix = md.with_name(md.name.removesuffix(".md") + ".appendix.md")
    console.print(f"decision record: {md}\n       appendix: {appendix}\n           json: {js}")
