"""A realistic, internally consistent inputs folder for GPU Ledger.

    from tools.generate import generate
    generate(Path("generated/fleet-64-7"), gpus=64, days=7, teams=4, seed=0)

writes `billing/`, `usage/`, `benchmarks/`, `api_spend/`, `prices/`, `registry/` and `fx/` in the formats
the parsers in `sources/` read, all rendered from one simulated fleet (`fleet.py`): same seed ->
same bytes (no wall clock, hash-based jitter in SQL, sorted keys, fixed number formats).
Bulk files (DCGM samples, billing lines, API requests) are written by DuckDB COPY.

Command line: `python -m tools.generate fleet --gpus 64 --days 7 --out generated/fleet-64-7`; the
single-format generators for speed runs and the constructed sample are subcommands too (cli.py).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from tools.generate.api_spend import write_api_spend
from tools.generate.benchmarks import write_benchmarks
from tools.generate.billing import write_billing
from tools.generate.fleet import Fleet, build_fleet
from tools.generate.fx import write_fx
from tools.generate.prices import write_prices
from tools.generate.registry import write_registry
from tools.generate.usage import write_dcgm, write_sacct

__all__ = ["Fleet", "build_fleet", "generate"]


def generate(out: Path, gpus: int, days: int, teams: int, seed: int,
             start: date = date(2025, 4, 1)) -> dict[str, int]:
    """Write the inputs folder `out`; returns rows (or records) written per file, keyed `family/file`."""
    out = Path(out)
    fleet = build_fleet(gpus, days, teams, seed, start)
    counts: dict[str, int] = {}

    def add(family: str, c: dict[str, int]) -> None:
        counts.update({f"{family}/{k}": v for k, v in c.items()})

    add("registry", write_registry(fleet, out / "registry"))
    add("prices", write_prices(fleet, out / "prices"))
    add("billing", write_billing(fleet, out / "billing"))
    add("usage", write_sacct(fleet, out / "usage"))
    add("usage", write_dcgm(fleet, out / "usage"))
    add("api_spend", write_api_spend(fleet, out / "api_spend"))
    add("benchmarks", write_benchmarks(fleet, out / "benchmarks", out / "api_spend"))
    add("fx", write_fx(fleet, out / "fx"))
    return dict(sorted(counts.items()))
