"""`python -m tools.generate`: synthetic inputs for tests, demos and speed runs (not part of the product).

- `fleet`: a realistic, internally consistent inputs folder (every family) for a simulated fleet;
- `dcgm`, `focus`, `litellm`: one large single-format file each, for the single-family speed runs
  in perf/ (`litellm --rows 300` also writes the committed LiteLLM sample);
- `constructed`: the constructed April 2025 fleet sample in samples/inputs (billing + usage).
"""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__.splitlines()[0])


@app.command()
def fleet(
    gpus: int = typer.Option(64, help="GPUs in the simulated fleet (8 per node for most instance types)."),
    days: int = typer.Option(7, help="Days of history, from 2025-04-01."),
    teams: int = typer.Option(4, help="Teams (the first four are the sample registry's)."),
    seed: int = typer.Option(0, help="Same seed -> byte-identical files."),
    out: Path = typer.Option(Path("generated"), help="Inputs folder to write (billing/, usage/, ...)."),  # noqa: B008
) -> None:
    """Generate billing, usage, benchmark, API spend, price and registry files for a simulated fleet."""
    from tools.generate import generate

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


@app.command()
def dcgm(
    out: Path = typer.Option(..., help="CSV file to write."),  # noqa: B008
    gpus: int = typer.Option(64, help="GPUs (8 per host, H100 80GB)."),
    days: int = typer.Option(31, help="Days of 1-minute samples."),
    seed: int = typer.Option(42),
    start: str = typer.Option("2026-01-01", help="First day (UTC)."),
) -> None:
    """A `dcgm_csv` series of N GPUs x D days (bulk_dcgm.py), not tied to any other file."""
    from tools.generate.bulk_dcgm import generate

    print(f"wrote {generate(out, gpus, days, seed, start)} rows to {out}")


@app.command()
def focus(
    out: Path = typer.Option(..., help="File to write: .csv, .csv.gz or .parquet."),  # noqa: B008
    rows: int = typer.Option(1_000_000),
    seed: int = typer.Option(42),
) -> None:
    """A FOCUS 1.0 export of N rows (bulk_focus.py)."""
    from tools.generate.bulk_focus import generate_focus_csv

    print(generate_focus_csv(out, rows, seed))


@app.command()
def litellm(
    out: Path = typer.Option(..., help="File to write."),  # noqa: B008
    rows: int = typer.Option(300),
    seed: int = typer.Option(20250414),
    start: str = typer.Option("2025-04-14", help="First day (UTC)."),
    days: int = typer.Option(3),
    fmt: str = typer.Option("csv", "--format", help="csv or jsonl."),
) -> None:
    """LiteLLM_SpendLogs export (litellm_logs.py); `--rows 300` is the committed sample."""
    from tools.generate.litellm_logs import generate

    if fmt not in ("csv", "jsonl"):
        raise typer.BadParameter("csv or jsonl", param_hint="--format")
    print(f"wrote {generate(out, rows, seed, start, days, fmt)} rows to {out}")


@app.command()
def constructed(
    out: Path = typer.Option(None, help="Inputs folder to write into (default: samples/inputs)."),  # noqa: B008
) -> None:
    """The constructed April 2025 fleet sample: FOCUS 1.2 export, invoice totals, DCGM series."""
    from tools.generate.constructed import SAMPLES, write

    root = out or SAMPLES
    for name, n in write(root).items():
        print(f"{root / name}: {n} rows")
