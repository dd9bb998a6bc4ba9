"""Reviewable GPU decision records: Markdown for people, JSON for machines, one pair per workload and day.

A record keeps what the domain method asks to keep so finance and platform can review a decision
later: the workload's registry entry, every candidate with its inputs, the computed table, the
acceptance criteria (the gates the SQL applied), today's cost, what is missing, and the chosen
candidate (the best-ranked eligible one: cheaper than today and passing every gate; none otherwise),
plus the publication it was computed from. Amounts are written exactly (Decimal as strings in JSON).
People read a one-page Markdown (reporting/decision_page.py); the full tables go to an appendix beside it.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd

from reporting.decision_page import page, summary
from reporting.formatting import exact
from reporting.safe_text import md_text
from reporting.team_reports import safe_name
from warehouse import serving

INPUT_COLUMNS = ("candidate", "route_kind", "evidence", "provider", "instance_type", "gpu_model", "gpus_per_instance",
                 "instances", "gpu_count", "intra_node_interconnect", "inter_node_network", "price_per_instance_hour",
                 "billed_hours", "pricing_category", "gpu_cost", "storage_network", "platform_labor", "failure_loss",
                 "accepted_outputs", "ttft_ms_p95", "tpot_ms_p95", "p95_latency_ms", "latency_evidence",
                 "memory_margin_pct", "quality_acceptance", "quality_evidence", "basis", "notes")
COMPUTED_COLUMNS = ("candidate", "monthly_cost", "effective_unit_cost", "today_monthly_cost", "monthly_savings",
                    "savings_pct", "memory_gate", "latency_gate", "quality_gate", "meets_slo", "eligible",
                    "failed_gate", "rank")
# Exactly the gates fct_candidate_comparison applies (docs/cost_model.md, "Stage-4 candidates").
ACCEPTANCE = [
    ("Memory gate: the candidate's memory margin at production concurrency (weights + KV cache + "
     "activations/workspace + per-GPU runtime reserve, fct_memory_fit) is at least the registry policy "
     "decisions.memory_margin_min_pct (default 15 %); not applied to API routes."),
    ("Latency gate: TTFT, TPOT and end-to-end latency at the workload's percentile meet the registry SLO "
     "fields (slo_ttft_ms, slo_tpot_ms, slo_e2el_ms) that are set; a missing measurement of a set SLO is "
     "'unknown' and not eligible."),
    ("Quality gate: quality acceptance (accepted / produced) is at least decisions.quality_acceptance_min "
     "(default 0.9): measured for the route where an eval exists, else the production filter's, labelled assumed."),
    ("Only candidates passing every gate are eligible and ranked, by monthly cost at the same production "
     "demand (= effective unit cost); every unranked row names its failing gate or missing evidence."),
    ("Evidence labels: measured (benchmark of the workload's model on the same GPU, provider and count), "
     "same_gpu, projected (scaled by memory bandwidth), analogue (another model's benchmark), missing. "
     "Confirm a projected or analogue choice with a benchmark before any reservation or purchase."),
]


class DecisionDataMissing(LookupError):
    """The tables a decision record is computed from are not published, or hold no rows for the workload."""


def _plain(value: Any) -> Any:
    """JSON-safe values: Decimal as exact strings, dates as ISO text, NaN/NA as null."""
    if isinstance(value, Decimal):
        return exact(value)
    if isinstance(value, (datetime, date, pd.Timestamp)):
        return value.isoformat()
    if value is None or (not isinstance(value, (str, bool, list, dict)) and pd.isna(value)):
        return None
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return value


def _records(df: pd.DataFrame, columns: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    cols = [c for c in (columns or tuple(df.columns)) if c in df.columns]
    return [{c: _plain(r[c]) for c in cols} for _, r in df.iterrows()]


def _md_table(rows: list[dict[str, Any]]) -> str:
    """A Markdown table; pipes in values are escaped so untrusted text cannot break the layout."""
    if not rows:
        return "_none_\n"
    cols = list(rows[0])
    cell = lambda v: "" if v is None else md_text(v)  # also no link, HTML or emphasis from untrusted names
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(cell(r.get(c)) for c in cols) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _eligible(candidates: pd.DataFrame) -> pd.Series:
    """The rows the SQL made eligible (older publications: meets_slo), GPU and API candidates only."""
    flag = candidates["eligible"] if "eligible" in candidates else candidates.get("meets_slo")
    ok = flag.astype("boolean").fillna(False).astype(bool) if flag is not None else pd.Series(False, index=candidates.index)
    if "route_kind" in candidates:
        ok &= ~candidates["route_kind"].isin(("current", "missing_evidence"))
    return ok


def build_decision(serving_path: Path, workload_id: str, decided_on: date) -> dict[str, Any]:
    """The decision as a dict (what the JSON file holds). A workload with a registry entry always gets
    a record; what is missing (tables, candidates, evidence) is stated in it instead of failing."""
    tables: dict[str, pd.DataFrame | None] = {}
    for table in ("fct_candidate_comparison", "dim_workload", "fct_memory_fit", "fct_capacity_options"):
        try:
            tables[table] = serving.workload_table(serving_path, table, workload_id)
        except serving.NotPublished:
            tables[table] = None
    candidates = tables["fct_candidate_comparison"]
    registry_rows = _records(tables["dim_workload"]) if tables["dim_workload"] is not None else []
    if candidates is None and not registry_rows:
        raise DecisionDataMissing(f"cannot write a decision record for {workload_id!r}: "
                                  "fct_candidate_comparison is not published (and dim_workload neither)")
    if (candidates is None or candidates.empty) and not registry_rows:
        raise DecisionDataMissing(f"cannot write a decision record for {workload_id!r}: "
                                  "fct_candidate_comparison has no candidates for it and the registry has no entry")
    candidates = candidates if candidates is not None else pd.DataFrame()
    registry = registry_rows[0] if registry_rows else None

    missing: list[str] = [f"{t} is not published" for t, df in tables.items() if df is None]
    kinds = candidates["route_kind"] if "route_kind" in candidates else pd.Series(dtype=object)
    for _, row in candidates[kinds == "missing_evidence"].iterrows():
        missing.append(f"{row['candidate']} ({row.get('notes') or ''})".strip())
    if candidates.empty and tables["fct_candidate_comparison"] is not None:
        missing.append("fct_candidate_comparison has no rows for this workload")

    eligible = candidates[_eligible(candidates)] if not candidates.empty else candidates
    if not eligible.empty and "status" in eligible:
        eligible = eligible[eligible["status"] == "eligible"]
    if not eligible.empty and "monthly_savings" in eligible:
        # A route that costs as much as today or more is never recommended, whatever flag it carries.
        savings_known = eligible["monthly_savings"].notna()
        eligible = eligible[~savings_known | (eligible["monthly_savings"].astype(float) > 0)]
    if not eligible.empty and "rank" in eligible:
        eligible = eligible.sort_values("rank")
    chosen = _records(eligible.head(1))[0] if not eligible.empty else None
    current = _records(candidates[kinds == "current"].head(1)) if not candidates.empty else []
    today = current[0] if current else None
    pending_row = backtest_row = None
    if "status" in candidates and "monthly_savings" in candidates:
        pending = candidates[(candidates["status"] == "eligible pending evidence")
                             & (candidates["monthly_savings"].astype(float) > 0)]
        if not pending.empty:
            pending_row = _records(pending.sort_values("monthly_cost").head(1))[0]
    if not candidates.empty and (kinds == "today_shape").any():
        backtest_row = _records(candidates[kinds == "today_shape"].head(1))[0]
    if tables["fct_capacity_options"] is not None and tables["fct_capacity_options"].empty:
        missing.append("no capacity options: the workload has no eligible GPU candidate to price rent/reserve/buy for")

    unit = (registry or {}).get("unit_of_success") or "accepted output"
    if chosen:
        verdict = (f"switch to {chosen['candidate']} (rank {chosen.get('rank')}, evidence {chosen.get('evidence')}): "
                   f"{chosen.get('monthly_cost')} USD a month vs {chosen.get('today_monthly_cost')} today, "
                   f"savings {chosen.get('monthly_savings')} ({chosen.get('savings_pct')} %)")
    elif today:
        verdict = (f"keep today's setup at {today.get('monthly_cost')} USD a month "
                   f"({today.get('effective_unit_cost')} per {unit}): no eligible candidate (cheaper than today "
                   "and passing every gate)")
        if pending_row:
            verdict += (f"; the cheapest route pending evidence, {pending_row['candidate']}, would save "
                        f"{pending_row.get('monthly_savings')} a month once {pending_row.get('evidence_to_run')} confirms it")
    else:
        verdict = "no eligible candidate and no production cost recorded: nothing to compare yet"
    return {
        "workload_id": workload_id,
        "decided_on": decided_on.isoformat(),
        "publication": {k: _plain(v) for k, v in (serving.publication(serving_path) or {}).items()},
        "registry_entry": registry,
        "acceptance_criteria": {
            "rules": ACCEPTANCE,
            "slo": {k: v for k, v in (registry or {}).items() if k.startswith("slo_")},
        },
        "today": today,
        "decision": verdict,
        "evidence_levels": (sorted({str(v) for v in candidates["evidence"].dropna()})
                            if "evidence" in candidates else []),
        "missing": missing,
        "candidate_inputs": _records(candidates, INPUT_COLUMNS) if not candidates.empty else [],
        "computed": _records(candidates, COMPUTED_COLUMNS) if not candidates.empty else [],
        "memory_fit": _records(tables["fct_memory_fit"]) if tables["fct_memory_fit"] is not None else None,
        "capacity_options": (_records(tables["fct_capacity_options"])
                             if tables["fct_capacity_options"] is not None else None),
        "chosen": chosen["candidate"] if chosen else None,
        "chosen_row": chosen,
        "pending_row": pending_row,
        "backtest_row": backtest_row,
        # Every column of every row, for the one-page rendering only (the JSON keeps inputs and computed).
        "computed_full": _records(candidates) if not candidates.empty else [],
    }


def _appendix(rec: dict[str, Any]) -> str:
    """Everything the one-page record leaves out: the full tables a later review may need."""
    pub = rec["publication"]
    slo = rec["acceptance_criteria"]["slo"]
    today = rec.get("today")
    parts = [
        f"# GPU decision appendix: {md_text(rec['workload_id'])} ({rec['decided_on']})\n",
        (f"Computed from publication run `{md_text(pub.get('run_id'))}` published {pub.get('published_at')} UTC. "
         f"Decision: {md_text(rec.get('decision', ''))}\n"),
        ("## Today\n\n" + _md_table([today])) if today else "## Today\n\n_no production cost recorded_\n",
        "## Missing\n",
        ("\n".join(f"- {md_text(m)}" for m in rec.get("missing") or []) + "\n") if rec.get("missing") else "_nothing_\n",
        "## Workload (registry entry)\n",
        _md_table([rec["registry_entry"]]) if rec["registry_entry"] else "_dim_workload is not published yet_\n",
        "## Acceptance criteria (the gates the SQL applied)\n",
        "\n".join(f"- {r}" for r in rec["acceptance_criteria"]["rules"]) + "\n",
        ("\n".join(f"- `{k}` = {md_text(v)}" for k, v in slo.items()) + "\n") if slo else "",
        f"Evidence levels present: {', '.join(md_text(e) for e in rec.get('evidence_levels') or []) or 'none'}.\n",
        "## Candidates: inputs\n", _md_table(rec["candidate_inputs"]),
        "## Computed\n", _md_table(rec["computed"]),
        "## Memory fit\n",
        _md_table(rec["memory_fit"]) if rec["memory_fit"] is not None else "_fct_memory_fit is not published yet_\n",
        "## Rent, reserve, buy or API\n",
        _md_table(rec["capacity_options"]) if rec["capacity_options"] is not None
        else "_fct_capacity_options is not published yet_\n",
    ]
    return "\n".join(parts)


def write_decision_record(serving_path: Path, out_dir: Path, workload_id: str,
                          decided_on: date | None = None) -> tuple[Path, Path]:
    """Write out_dir/<workload_id>/<YYYY-MM-DD>.md (one page), .appendix.md (the full tables) and .json;
    raises DecisionDataMissing only when neither the candidates nor the registry know the workload."""
    md_path, json_path, _ = _write(serving_path, out_dir, workload_id, decided_on or date.today())
    return md_path, json_path


def _write(serving_path: Path, out_dir: Path, workload_id: str, decided_on: date) -> tuple[Path, Path, str]:
    record = build_decision(serving_path, workload_id, decided_on)
    folder = Path(out_dir) / safe_name(workload_id)
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{decided_on:%Y-%m-%d}"
    md_path, json_path, appendix = folder / f"{stem}.md", folder / f"{stem}.json", folder / f"{stem}.appendix.md"
    md_path.write_text(page(record, appendix.name), encoding="utf-8")
    appendix.write_text(_appendix(record), encoding="utf-8")
    record.pop("computed_full")
    json_path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return md_path, json_path, summary(record)


def write_all_records(serving_path: Path, out_dir: Path, workload_ids: list[str],
                      decided_on: date | None = None) -> tuple[Path, list[Path]]:
    """One record per workload and an index (out_dir/index-<YYYY-MM-DD>.md) with each one's decision.
    A workload whose data is missing is listed in the index with the reason instead of stopping the rest."""
    decided_on = decided_on or date.today()
    lines = [f"# GPU decisions ({decided_on:%Y-%m-%d})\n", "| Workload | Decision | Record |", "|---|---|---|"]
    written: list[Path] = []
    for wid in workload_ids:
        try:
            md, _, verdict = _write(serving_path, out_dir, wid, decided_on)
        except DecisionDataMissing as exc:
            lines.append(f"| {md_text(wid)} | {md_text(exc)} | — |")
            continue
        written.append(md)
        rel = md.relative_to(Path(out_dir)).as_posix()
        lines.append(f"| {md_text(wid)} | {verdict} | [{md_text(rel)}](<{rel}>) |")
    index = Path(out_dir) / f"index-{decided_on:%Y-%m-%d}.md"
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    index.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return index, written
