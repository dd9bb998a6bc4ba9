"""Reviewable GPU decision records: Markdown for people, JSON for machines, one pair per workload and day.

A record keeps what the domain method asks to keep so finance and platform can review a decision
later: the workload's registry entry, every candidate with its inputs, the computed table, the
acceptance criteria, and the chosen candidate (the best-ranked candidate that meets the SLO), plus
the publication it was computed from. Amounts are written exactly (Decimal as strings in JSON).
"""

from __future__ import annotations

import json
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd

from reporting.formatting import exact
from reporting.team_reports import safe_name
from warehouse import serving

INPUT_COLUMNS = ("candidate", "provider", "gpu_model", "gpu_count", "pricing_category", "route_kind", "gpu_cost",
                 "storage_network", "platform_labor", "failure_loss", "accepted_outputs", "p95_latency_ms",
                 "memory_margin_pct", "quality_acceptance", "basis", "notes")
COMPUTED_COLUMNS = ("candidate", "effective_unit_cost", "meets_slo", "rank")
ACCEPTANCE = [
    ("A candidate is eligible only if it meets the workload's SLO (meets_slo): p95/p99 latency target, "
    "memory margin and quality acceptance as recorded in the registry (slo_* fields)."),
    ("Eligible candidates are ranked by effective unit cost = all-in cost / accepted outputs "
    "(GPU cost + storage/network + platform labour + failure loss); the best rank is chosen."),
    ("'projected' figures are estimates, 'measured' ones come from benchmark runs: a projected choice "
    "should be confirmed by a benchmark before any reservation or purchase."),
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
    cell = lambda v: "" if v is None else str(v).replace("|", "\\|").replace("\n", " ")
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(cell(r.get(c)) for c in cols) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def build_decision(serving_path: Path, workload_id: str, decided_on: date) -> dict[str, Any]:
    """The decision as a dict (what the JSON file holds)."""
    try:
        candidates = serving.workload_table(serving_path, "fct_candidate_comparison", workload_id)
    except serving.NotPublished as exc:
        raise DecisionDataMissing(f"cannot write a decision record for {workload_id!r}: {exc}") from exc
    if candidates.empty:
        raise DecisionDataMissing(f"cannot write a decision record for {workload_id!r}: "
                                  "fct_candidate_comparison has no candidates for it")
    optional: dict[str, list[dict[str, Any]] | None] = {}
    for table in ("dim_workload", "fct_memory_fit", "fct_capacity_options"):
        try:
            optional[table] = _records(serving.workload_table(serving_path, table, workload_id))
        except serving.NotPublished:
            optional[table] = None
    eligible = candidates[candidates["meets_slo"].fillna(False).astype(bool)].sort_values("rank")
    chosen = _records(eligible.head(1))[0] if not eligible.empty else None
    registry = optional["dim_workload"]
    return {
        "workload_id": workload_id,
        "decided_on": decided_on.isoformat(),
        "publication": {k: _plain(v) for k, v in (serving.publication(serving_path) or {}).items()},
        "registry_entry": registry[0] if registry else None,
        "acceptance_criteria": {
            "rules": ACCEPTANCE,
            "slo": {k: v for k, v in (registry[0] if registry else {}).items() if k.startswith("slo_")},
        },
        "candidate_inputs": _records(candidates, INPUT_COLUMNS),
        "computed": _records(candidates, COMPUTED_COLUMNS),
        "memory_fit": optional["fct_memory_fit"],
        "capacity_options": optional["fct_capacity_options"],
        "chosen": chosen["candidate"] if chosen else None,
        "chosen_row": chosen,
    }


def _markdown(rec: dict[str, Any]) -> str:
    """The human-readable record."""
    pub = rec["publication"]
    chosen = (f"**{rec['chosen']}** (rank {rec['chosen_row'].get('rank')}, effective unit cost "
              f"{rec['chosen_row'].get('effective_unit_cost')}, basis {rec['chosen_row'].get('basis')})"
              if rec["chosen"] else "**none**: no candidate meets the SLO, so nothing is chosen")
    slo = rec["acceptance_criteria"]["slo"]
    parts = [
        f"# GPU decision: {rec['workload_id']} ({rec['decided_on']})\n",
        f"Computed from publication run `{pub.get('run_id')}` published {pub.get('published_at')} UTC.\n",
        f"## Decision\n\nChosen candidate: {chosen}.\n",
        "## Workload (registry entry)\n",
        _md_table([rec["registry_entry"]]) if rec["registry_entry"] else "_dim_workload is not published yet_\n",
        "## Acceptance criteria\n",
        "\n".join(f"- {r}" for r in rec["acceptance_criteria"]["rules"]) + "\n",
        ("\n".join(f"- `{k}` = {v}" for k, v in slo.items()) + "\n") if slo else "",
        "## Candidates: inputs\n", _md_table(rec["candidate_inputs"]),
        "## Computed\n", _md_table(rec["computed"]),
        "## Memory fit\n",
        _md_table(rec["memory_fit"]) if rec["memory_fit"] is not None else "_fct_memory_fit is not published yet_\n",
        "## Rent, reserve or API\n",
        _md_table(rec["capacity_options"]) if rec["capacity_options"] is not None
        else "_fct_capacity_options is not published yet_\n",
    ]
    return "\n".join(parts)


def write_decision_record(serving_path: Path, out_dir: Path, workload_id: str,
                          decided_on: date | None = None) -> tuple[Path, Path]:
    """Write out_dir/<workload_id>/<YYYY-MM-DD>.md and .json; raises DecisionDataMissing without serving."""
    decided_on = decided_on or date.today()
    record = build_decision(serving_path, workload_id, decided_on)
    folder = Path(out_dir) / safe_name(workload_id)
    folder.mkdir(parents=True, exist_ok=True)
    md_path, json_path = folder / f"{decided_on:%Y-%m-%d}.md", folder / f"{decided_on:%Y-%m-%d}.json"
    md_path.write_text(_markdown(record), encoding="utf-8")
    json_path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return md_path, json_path
