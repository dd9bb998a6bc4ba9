"""The one-page decision record: a recommendation paragraph, a short ranked table and the back-test line.

The full tables (registry entry, every candidate's inputs and gates, memory fit, capacity options) go
to an appendix file beside it, so the page a reviewer reads stays one page. Only a route that is
cheaper than today and passes every gate is ever recommended; otherwise the page says to keep
today's setup and names the cheapest route still pending evidence with the benchmark that settles it.
Every name taken from data goes through md_text (no formula, link or emphasis from untrusted text).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from reporting.formatting import fmt_money, fmt_unit_cost
from reporting.safe_text import md_text

TABLE_ROWS = 8  # today's row plus the best seven candidates: more belongs in the appendix
# The order a reviewer reads candidates in: what can be done now, then what needs evidence, then the rest.
STATUS_ORDER = {"eligible": 0, "eligible pending evidence": 1, "costs more": 2, "costs more, pending evidence": 3,
                "ineligible": 4, "missing evidence": 5}
NOT_CANDIDATES = ("current", "today_shape", "missing_evidence")


def _dec(value: Any) -> Decimal | None:
    if value is None:
        return None
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


def per_output(row: dict[str, Any]) -> Decimal | None:
    """The monthly saving divided by the monthly demand the row is sized to (saving per accepted output)."""
    saving, demand = _dec(row.get("monthly_savings")), _dec(row.get("accepted_outputs"))
    return saving / demand if saving is not None and demand else None


def _money(value: Any, cur: str) -> str:
    return fmt_money(_dec(value), cur)


def _risks(row: dict[str, Any]) -> list[str]:
    """What could overturn the number: weak evidence, open or assumed gates, extrapolated demand."""
    risks = []
    if row.get("evidence") in ("projected", "analogue", "missing"):
        risks.append(f"its throughput evidence is {md_text(row['evidence'])}, not a run of this workload on this "
                     "GPU: confirm with a benchmark before any reservation or purchase")
    lat = row.get("latency_evidence")
    if lat and lat not in ("measured", "n/a", row.get("evidence")):
        risks.append(f"its latency evidence is {md_text(lat)}")
    if row.get("quality_evidence") == "assumed":
        risks.append("quality acceptance is assumed (production's carried over), not evaluated on this route")
    if row.get("failed_gate"):
        risks.append(f"open gates: {md_text(row['failed_gate'])}")
    observed, days = row.get("days_observed"), row.get("days_in_month")
    if observed and days and observed < days:
        risks.append(f"demand is extrapolated from {observed} of {days} days")
    return risks


def _status_counts(candidates: list[dict[str, Any]]) -> str:
    counts: dict[str, int] = {}
    for r in candidates:
        counts[str(r.get("status"))] = counts.get(str(r.get("status")), 0) + 1
    return ", ".join(f"{n} {md_text(s)}" for s, n in sorted(counts.items(), key=lambda kv: STATUS_ORDER.get(kv[0], 9)))


def recommendation(rec: dict[str, Any]) -> str:
    """The one paragraph: switch (and to what, saving, evidence, risks, next benchmark) or keep today's setup."""
    rows, today, chosen, pending = rec["computed_full"], rec.get("today"), rec.get("chosen_row"), rec.get("pending_row")
    cur = (today or chosen or {}).get("currency") or "USD"
    unit = md_text((rec.get("registry_entry") or {}).get("unit_of_success") or "accepted output")
    base = (f"today's setup runs at {_money(today.get('monthly_cost'), cur)} a month "
            f"({fmt_unit_cost(_dec(today.get('effective_unit_cost')), cur)} per {unit})"
            if today else "no production cost is recorded for today's setup")
    if chosen:
        risks = _risks(chosen)
        nxt = chosen.get("evidence_to_run")
        demand = _dec(chosen.get("accepted_outputs"))
        measured = [r for r in rows if r.get("status") == "eligible" and r.get("evidence") == "measured"
                    and r.get("candidate") != chosen.get("candidate")]
        if chosen.get("evidence") != "measured" and measured:
            best = min(measured, key=lambda r: r.get("rank") or 10**6)
            risks.append(f"the cheapest eligible route with measured evidence is {md_text(best['candidate'])} "
                         f"(rank {best.get('rank')}, saving {_money(best.get('monthly_savings'), cur)} a month)")
        cheaper = _dec(pending.get("monthly_cost")) if pending else None
        if cheaper is not None and cheaper < (_dec(chosen.get("monthly_cost")) or cheaper):
            risks.append(f"a cheaper route is pending evidence: {md_text(pending['candidate'])} would save "
                         f"{_money(pending.get('monthly_savings'), cur)} a month once "
                         f"{md_text(pending.get('evidence_to_run') or 'its open gates')} settles it")
        return (f"**Switch to {md_text(chosen['candidate'])}.** {base[0].upper() + base[1:]}; at the same demand "
                f"({f'{demand:,.0f}' if demand is not None else 'n/a'} per month, unit: {unit}) it costs "
                f"{_money(chosen.get('monthly_cost'), cur)} a month, saving "
                f"{_money(chosen.get('monthly_savings'), cur)} a month ({_pct(chosen.get('savings_pct'))}) or "
                f"{fmt_unit_cost(per_output(chosen), cur)} per {unit}. Evidence grade: "
                f"{md_text(chosen.get('evidence') or 'unknown')}. Risks: {'; '.join(risks) if risks else 'none recorded'}. "
                f"Next benchmark to run: {md_text(nxt) if nxt else 'none needed (the evidence is measured)'}.")
    candidates = [r for r in rows if r.get("route_kind") not in NOT_CANDIDATES]
    why = (f"no candidate is both cheaper than today and passing every gate ({_status_counts(candidates)})"
           if candidates else "no candidate could be sized for this workload")
    text = f"**Keep today's setup** (no eligible candidate): {base}; {why}."
    if pending:
        gates = pending.get("failed_gate")
        text += (f" The cheapest route pending evidence is {md_text(pending['candidate'])} at "
                 f"{_money(pending.get('monthly_cost'), cur)} a month, which would save "
                 f"{_money(pending.get('monthly_savings'), cur)} a month "
                 f"({fmt_unit_cost(per_output(pending), cur)} per {unit}) if its evidence holds"
                 f"{f' (open: {md_text(gates)})' if gates else ''}; the benchmark that would settle it: "
                 f"{md_text(pending.get('evidence_to_run') or 'not named')}.")
    missing = [r for r in rows if r.get("route_kind") == "missing_evidence" and r.get("evidence_to_run")]
    if missing and not pending:
        text += f" Benchmark to run first: {md_text(missing[0]['evidence_to_run'])}."
    return text


def _pct(value: Any) -> str:
    v = _dec(value)
    return "n/a" if v is None else f"{v:.1f} %"


def ranked_rows(rec: dict[str, Any]) -> list[dict[str, Any]]:
    """Today's row, then candidates by status (eligible first, by rank) and monthly cost."""
    rows = rec["computed_full"]
    today = [r for r in rows if r.get("route_kind") == "current"][:1]
    cands = [r for r in rows if r.get("route_kind") not in NOT_CANDIDATES]
    cands.sort(key=lambda r: (STATUS_ORDER.get(str(r.get("status")), 9), r.get("rank") or 10**6,
                              _dec(r.get("monthly_cost")) if _dec(r.get("monthly_cost")) is not None else Decimal("Infinity")))
    return today + cands


def ranked_table(rec: dict[str, Any]) -> str:
    rows = ranked_rows(rec)
    if not rows:
        return "_no candidates_\n"
    shown, cur = rows[:TABLE_ROWS], rows[0].get("currency") or "USD"
    lines = ["| Rank | Candidate | Monthly cost | Saving / month | Status | Evidence |", "|---|---|---|---|---|---|"]
    for r in shown:
        saving = "—" if r.get("route_kind") == "current" else _money(r.get("monthly_savings"), cur)
        lines.append(f"| {r.get('rank') if r.get('rank') is not None else '—'} | {md_text(r.get('candidate'))} | "
                     f"{_money(r.get('monthly_cost'), cur)} | {saving} | {md_text(r.get('status') or '')} | "
                     f"{md_text(r.get('evidence') or '')} |")
    if len(rows) > len(shown):
        lines.append(f"\n{len(rows) - len(shown)} more rows in the appendix.")
    return "\n".join(lines) + "\n"


def backtest_line(rec: dict[str, Any]) -> str:
    bt = rec.get("backtest_row")
    if not bt:
        return "Back-test: none (today's instances could not be priced by the model for this workload)."
    cur = bt.get("currency") or "USD"
    gap = _dec(bt.get("backtest_gap_pct"))
    source = bt.get("backtest_gap_source")
    return (f"Back-test: today's own shape priced by the model comes to {_money(bt.get('monthly_cost'), cur)} a month "
            f"vs {_money(bt.get('today_monthly_cost'), cur)} measured, a gap of "
            f"{'n/a' if gap is None else f'{gap:+.1f} %'}{f' ({md_text(source)})' if source else ''}.")


def summary(rec: dict[str, Any]) -> str:
    """The decision in one line for the index of a run over every workload."""
    chosen, today, pending = rec.get("chosen_row"), rec.get("today"), rec.get("pending_row")
    cur = (today or chosen or {}).get("currency") or "USD"
    if chosen:
        return (f"switch to {md_text(chosen['candidate'])}: saves {_money(chosen.get('monthly_savings'), cur)} a month "
                f"({_pct(chosen.get('savings_pct'))}), evidence {md_text(chosen.get('evidence') or 'unknown')}")
    text = (f"keep today's setup ({_money(today.get('monthly_cost'), cur)} a month)" if today
            else "no eligible candidate and no production cost recorded")
    if pending:
        text += (f"; pending evidence: {md_text(pending['candidate'])} would save "
                 f"{_money(pending.get('monthly_savings'), cur)} a month")
    return text


def page(rec: dict[str, Any], appendix_name: str) -> str:
    pub = rec["publication"]
    return "\n".join([
        f"# GPU decision: {md_text(rec['workload_id'])} ({rec['decided_on']})\n",
        f"Computed from publication run `{md_text(pub.get('run_id'))}` published {pub.get('published_at')} UTC.\n",
        "## Recommendation\n", recommendation(rec) + "\n",
        "## Candidates\n", ranked_table(rec),
        backtest_line(rec) + "\n",
        f"Full tables (inputs, gates, memory fit, rent/reserve/buy): [{md_text(appendix_name)}](<{appendix_name}>).\n",
    ])
