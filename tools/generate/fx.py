"""Exchange rates for a generated fleet: an ECB-layout rates file (`eurofxref-hist.csv`) over the fleet's days.

Synthetic, deterministic rates (no wall clock): EUR -> USD and EUR -> CAD drift by a tenth of a cent a
business day; weekends have no row, as in the ECB's file, so a weekend charge exercises the lookback.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from tools.generate.fleet import Fleet


def write_fx(fleet: Fleet, out: Path) -> dict[str, int]:
    """One ECB-layout file covering five days before the fleet's start to its last day; rows per file."""
    out.mkdir(parents=True, exist_ok=True)
    lines = []
    day = fleet.start - timedelta(days=5)
    last = fleet.start + timedelta(days=fleet.days)
    step = 0
    while day <= last:
        if day.weekday() < 5:
            lines.append(f"{day.isoformat()},{1.0800 + 0.001 * (step % 9):.4f},{1.4700 + 0.001 * (step % 7):.4f},")
            step += 1
        day += timedelta(days=1)
    # newest first, like the ECB's own file
    (out / "eurofxref-hist.csv").write_text("Date,USD,CAD,\n" + "\n".join(reversed(lines)) + "\n")
    return {"eurofxref-hist.csv": len(lines) * 2}
