"""`gpu-ledger generate`: write a realistic synthetic inputs folder (see pipelines/generate)."""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table


def generate_command(
    gpus: int = typer.Option(64, help="GPUs in the simulated fleet (8 per node for most instance types)."),
    days: int = typer.Option(7, help="Days of history, from 2025-04-01."),
    teams: int = typer.Option(4, help="Teams (the first four are the sample registry's)."),
    seed: int = typer.Option(0, help="Same seed -> byte-identical files."),
    out: Path = typer.Option(Path("generated"), help="Inputs folder to write (billing/, usage/, ...)."),  # noqa: B008
) -> None:
    """Generate billing, usage, benchmark, API spend, price and registry files for a simulated fleet."""
    from pipelines.generate import generate

    started = time.perf_counter()
    counts = generate(out, gpus=gpus, days=days, teams=teams, seed=seed)
    elapsed = time.perf_counter() - started
    per_family: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for key, rows in counts.items():
        family = key.split("/", 1)[0]
        per_family[family][0] += 1
        per_family[family][1] += rows
    for family, stats in per_family.items():
        stats[2] = sum(p.stat().st_size for p in (out / family).iterdir() if p.is_file())
    table = Table(title=f"Generated {out} ({gpus} GPUs x {days} days, {teams} teams, seed {seed})")
    for col in ("family", "files", "rows", "MB"):
        table.add_column(col, justify="left" if col == "family" else "right")
    for family, (files, rows, size) in sorted(per_family.items()):
        table.add_row(family, str(files), f"{rows:,}", f"{size / 1e6:,.1f}")
    Console().print(table)
    total_rows = sum(v[1] for v in per_family.values())
    total_mb = sum(v[2] for v in per_family.values()) / 1e6
    Console().print(f"{total_rows:,} rows, {total_mb:,.1f} MB in {elapsed:.1f} s "
                    f"({total_rows / elapsed:,.0f} rows/s, {total_mb / elapsed:,.1f} MB/s)")
