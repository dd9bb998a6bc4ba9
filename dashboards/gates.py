"""Each decision gate as 'measured vs target' text (memory margin, latency SLO, quality acceptance), for the GPU
decision page: a passed gate shows how far it is from its target, a failed or unmeasured one says so beside it."""

from __future__ import annotations

from typing import Any

import pandas as pd

MARK = {"pass": "✓", "fail": "✗", "unknown": "?", "n/a": ""}


def _num(value: Any) -> float | None:
    return float(value) if value is not None and pd.notna(value) else None


def _mark(gate: Any) -> str:
    return MARK.get(str(gate), "") if gate is not None and pd.notna(gate) else ""


def memory(row: pd.Series) -> str:
    """'✓ 23.0 % margin (target ≥ 15 %)'; API routes hold no GPU memory."""
    if row.get("memory_gate") == "n/a":
        return "n/a (no GPU)"
    margin, target = _num(row.get("memory_margin_pct")), _num(row.get("memory_margin_min_pct"))
    goal = f"target ≥ {target:g} %" if target is not None else "target: policy memory_margin_min_pct"
    shown = f"{margin:,.1f} % margin" if margin is not None else "not estimated"
    return f"{_mark(row.get('memory_gate'))} {shown} ({goal})".strip()


def latency(row: pd.Series) -> str:
    """'✓ TTFT 542 / 3,000 ms · TPOT 48.1 / 120 ms · e2e 7,834 ms (no target)': each measure against its SLO."""
    parts = []
    for name, value, target in (("TTFT", "ttft_ms_p95", "slo_ttft_ms"), ("TPOT", "tpot_ms_p95", "slo_tpot_ms"),
                                ("e2e", "p95_latency_ms", "slo_e2el_ms")):
        v, t = _num(row.get(value)), _num(row.get(target))
        if v is None and t is None:
            continue
        measured = f"{v:,.1f}" if v is not None and v < 100 else (f"{v:,.0f}" if v is not None else "not measured")
        goal = f"{t:,.0f} ms" if t is not None else "ms (no target)"
        parts.append(f"{name} {measured} / {goal}" if t is not None else f"{name} {measured} {goal}")
    return f"{_mark(row.get('latency_gate'))} " + (" · ".join(parts) if parts else "no SLO and no measure")


def quality(row: pd.Series) -> str:
    """'✓ 96.8 % accepted (target ≥ 90 %)'."""
    share, target = _num(row.get("quality_acceptance")), _num(row.get("quality_acceptance_min"))
    goal = f"target ≥ {target:.0%}" if target is not None else "target: policy quality_acceptance_min"
    shown = f"{share:.1%} accepted" if share is not None else "not measured"
    return f"{_mark(row.get('quality_gate'))} {shown} ({goal})".strip()


def columns(df: pd.DataFrame) -> dict[str, list[str]]:
    """The three gate columns for a table of candidate rows."""
    rows = [r for _, r in df.iterrows()]
    return {"Memory gate": [memory(r) for r in rows], "Latency gate (p95)": [latency(r) for r in rows],
            "Quality gate": [quality(r) for r in rows]}
