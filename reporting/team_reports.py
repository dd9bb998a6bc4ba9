"""Static per-team chargeback/showback reports: one HTML (self-contained, prints well) and one CSV.

`write_team_reports(serving, out_dir)` writes `out_dir/<YYYY-MM>/<team>.html|.csv` for every team and
month with any cost in the chargeback or the all-in showback (or one team / month), and
`out_dir/index.html` linking every report. Each report names the three figures as every page does
(Invoice -> Chargeback -> All-in showback) with the team's bridge. The HTML has inline CSS and hand-drawn inline
SVG bars, so it opens offline and needs no JavaScript; the CSV keeps exact decimal amounts in a
long format (section, item, metric, value) so finance can load it as is. Team names are untrusted:
they are HTML-escaped in the page, sanitised in file names and quoted in the CSV where a spreadsheet would
run them as formulas (reporting.safe_text).
"""

from __future__ import annotations

import csv
import hashlib
import re
from datetime import UTC, date, datetime
from decimal import Decimal
from html import escape
from pathlib import Path
from typing import Any

import pandas as pd

from reporting.formatting import column_label, exact, fmt_money, fmt_unit_cost, value_label
from reporting.safe_text import csv_cell
from reporting.team_anomalies import TeamAnomalyReader, team_anomalies_html
from reporting.team_money import bridge_html, figures_html, in_reporting_currency, team_bridge, write_index
from reporting.team_month_frames import TeamMonthFrames, idle_and_waste, records
from warehouse import serving

CHARGE_COMPONENTS = ("direct_cost", "shared_cost", "idle_cost", "unused_commitment", "api_cost", "credits", "tax")
BASES = ("billed_cost", "amortised_cost")
BUDGET_COLUMNS = ("budget_monthly", "budget_remaining", "forecast_month_end")
UNIT_COLUMNS = ("workload_type", "all_in_cost", "produced_outputs", "accepted_outputs", "unit_of_success",
                "effective_unit_cost", "naive_unit_cost", "waste_cost", "waste_share")
CSS = """
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#1b1f24;margin:2rem auto;max-width:60rem;padding:0 1rem}
h1{font-size:1.6rem;margin:0 0 .2rem}h2{font-size:1.15rem;margin:1.6rem 0 .5rem;border-bottom:1px solid #d0d7de}
.meta{color:#57606a;font-size:.85rem}.total{font-size:2rem;font-weight:600;margin:.6rem 0}
table{border-collapse:collapse;width:100%;margin:.4rem 0;page-break-inside:avoid}
table{font-size:12px}th,td{border:1px solid #d0d7de;padding:.25rem .4rem;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
th{background:#f6f8fa}svg{display:block;margin:.4rem 0}.note{color:#57606a;font-style:italic}
table.figs td{vertical-align:top;width:33%}.fig{font-size:1.15rem;font-weight:600}.def{color:#57606a;font-size:.8rem}
th,td{overflow-wrap:anywhere}section.block{break-inside:avoid;page-break-inside:avoid}
@media print{body{margin:0;max-width:none}h2{page-break-after:avoid;break-after:avoid}table{font-size:10px}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}}@page{size:A4;margin:15mm}
"""


def safe_name(name: str) -> str:
    """A file-name-safe form of an untrusted name: '(unallocated)' -> 'unallocated', '../x' -> 'x'."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", str(name)).strip("-._")
    return cleaned[:80] or "unnamed"


def _unique_names(names: list[str]) -> dict[str, str]:
    """Sanitised names, with a short hash added where two different names would share a file."""
    out: dict[str, str] = {}
    counts: dict[str, int] = {}
    for n in names:
        counts[safe_name(n)] = counts.get(safe_name(n), 0) + 1
    for n in names:
        base = safe_name(n)
        out[n] = base if counts[base] == 1 else f"{base}-{hashlib.sha256(n.encode()).hexdigest()[:8]}"
    return out


def svg_bars(items: list[tuple[str, Decimal | float]], currency: str, width: int = 640) -> str:
    """Horizontal bars (negative amounts such as credits go left of zero), labelled with rounded money."""
    items = [(label, float(v)) for label, v in items if v is not None]
    if not items:
        return ""
    row, label_w, value_w = 24, 170, 130
    plot_w = width - label_w - value_w
    lo, hi = min(0.0, *(v for _, v in items)), max(0.0, *(v for _, v in items))
    scale = plot_w / ((hi - lo) or 1.0)
    zero = label_w + (-lo) * scale
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{row * len(items) + 8}" '
             f'role="img" aria-label="bar chart">')]
    for i, (label, v) in enumerate(items):
        y = 4 + i * row
        x, w = (zero, v * scale) if v >= 0 else (zero + v * scale, -v * scale)
        colour = "#2f81f7" if v >= 0 else "#1a7f37"
        parts.append(f'<text x="{label_w - 6}" y="{y + 15}" text-anchor="end" font-size="12">{escape(label)}</text>'
                     f'<rect x="{x:.1f}" y="{y + 3}" width="{max(w, 1):.1f}" height="{row - 8}" fill="{colour}"/>'
                     f'<text x="{label_w + plot_w + 6}" y="{y + 15}" font-size="12">'
                     f'{escape(fmt_money(v, currency))}</text>')
    parts.append(f'<line x1="{zero:.1f}" y1="0" x2="{zero:.1f}" y2="{row * len(items) + 8}" stroke="#57606a"/></svg>')
    return "".join(parts)


def _html_table(df: pd.DataFrame, money: set[str], currency_col: str = "currency",
                unit_costs: frozenset[str] = frozenset(), columns: list[str] | None = None) -> str:
    """An escaped HTML table of `columns` (default: all); money and unit-cost columns formatted with their row's
    currency."""
    cols = list(df.columns) if columns is None else list(columns)
    # Spaced headers can wrap, so wide tables still fit an A4 page.
    cur = df[currency_col].iloc[0] if currency_col in cols and len(df) and df[currency_col].nunique() == 1 else None
    head = "".join(f"<th>{escape(column_label(str(c), cur))}</th>" for c in cols)
    at = cols.index(currency_col) if currency_col in cols else None
    body = []
    # Column by column (a Series yields Python scalars), not iterrows: a Series per row was most of a report.
    for values in zip(*(df[c] for c in cols)):
        row_currency = values[at] if at is not None else None
        cells = []
        for c, v in zip(cols, values):
            if c in money:
                cells.append(f'<td class="n">{escape(fmt_money(v, row_currency))}</td>')
            elif c in unit_costs:
                cells.append(f'<td class="n">{escape(fmt_unit_cost(v, row_currency))}</td>')
            elif isinstance(v, (int, float, Decimal)) and not isinstance(v, bool):
                text = "n/a" if pd.isna(v) else (f"{float(v):.1%}" if c.endswith("share") else f"{float(v):,.6g}")
                cells.append(f'<td class="n">{escape(text)}</td>')
            else:
                cells.append(f"<td>{escape('' if v is None or (isinstance(v, float) and pd.isna(v)) else str(v))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _team_month(path: Path, frames: TeamMonthFrames, team: str, period: date,
                anomalies: TeamAnomalyReader | None = None) -> dict[str, Any]:
    """Everything a report shows for one team and month; sections not published yet come back None."""
    out: dict[str, Any] = frames.parts(team, period)
    currencies = sorted(set(out["charges"]["currency"]))
    if out["showback"] is not None:
        currencies = sorted(set(currencies) | set(out["showback"]["currency"]))
    out["figures"] = [team_bridge(out["charges"], out["showback"], c) for c in currencies]
    # idle cost and waste share from the all-in showback, idle included (owned sites' idle too)
    showback = out["showback"]  # None when not published
    out["waste"] = {} if showback is None else {c: idle_and_waste(showback, c) for c in currencies}
    out["charges_through"] = frames.charges_through
    out["anomalies_html"] = team_anomalies_html(path, team, period, anomalies)
    out["reporting"] = in_reporting_currency(path, team, period, frames.converted_row(team, period))
    return out


def _csv_rows(team: str, period: str, parts: dict[str, Any], pub: dict[str, Any]) -> list[list[Any]]:
    """Long-format rows: section, team_id, month, currency, item, metric, value (exact), run_id, published_at."""
    run, at = pub.get("run_id"), pub.get("published_at")
    rows: list[list[Any]] = []
    for metric, value, cur in parts.get("reporting", {}).get("rows", []):
        rows.append(["reporting_currency", team, period, cur, team, metric, value, run, at])
    for f in parts["figures"]:
        for name, key in (("Invoice", "invoice"), ("Chargeback", "chargeback"), ("All-in showback", "showback")):
            if f[key] is not None:
                rows.append(["figures", team, period, f["currency"], name, f["basis"] or "", f[key], run, at])
        for i, (step, _, amount, running) in enumerate(f["bridge"], 1):
            rows += [["bridge", team, period, f["currency"], f"{i:02d} {step}", m, v, run, at]
                     for m, v in (("amount", amount), ("running_total", running))]
    for r in records(parts["charges"]):
        for c in (*BASES, *CHARGE_COMPONENTS, "total_cost", "charge_lines", *BUDGET_COLUMNS):
            if c in r and r[c] is not None:
                section = "budget" if c in BUDGET_COLUMNS else "chargeback"
                rows.append([section, team, period, r["currency"], r.get("basis") or team, c, r[c], run, at])
    budgets = parts.get("budgets")
    for r in (records(budgets) if budgets is not None else ()):
        for c in ("budget_monthly", "chargeback_total", "showback_total", "budget_remaining_chargeback",
                  "budget_remaining_showback"):
            if r[c] is not None and not pd.isna(r[c]):
                rows.append(["budget", team, period, r["currency"], team, c, r[c], run, at])
    showback = parts.get("showback")
    for r in (records(showback) if showback is not None else ()):
        rows.append(["showback", team, period, r["currency"], f"{r['component']} ({r['cost_basis']})",
                     r["bridge_step"], r["amount"], run, at])
    units = parts.get("units")
    if units is not None:
        for r in records(units):
            for c in ("all_in_cost", "produced_outputs", "accepted_outputs", "effective_unit_cost", "naive_unit_cost"):
                rows.append(["unit_cost", team, period, r.get("currency"), r["workload_id"], c, r[c], run, at])
            for c in (*serving.WASTE_COMPONENTS, "waste_cost"):
                if c in r:
                    rows.append(["waste", team, period, r.get("currency"), r["workload_id"], c, r[c], run, at])
    util = parts.get("util")
    if util is not None:
        for r in records(util):
            for c in ("billed_gpu_hours", "used_gpu_hours", "idle_gpu_hours", "failed_job_gpu_hours"):
                rows.append(["waste", team, period, None, "gpu_hours", c, r[c], run, at])
    return rows


def _missing(parts: dict[str, Any], key: str) -> str:
    return f'<p class="note">Not published yet: {escape(parts.get(f"{key}_missing", ""))}.</p>'


def _html(team: str, period: str, parts: dict[str, Any], pub: dict[str, Any], stem: str = "") -> str:
    """The self-contained report page, linked to its CSV and to the index of every report (relative links, so
    the folder can be moved or shared whole)."""
    charges: pd.DataFrame = parts["charges"]
    sections = [f"<h1>Team cost report: {escape(team)} · {escape(period)}</h1>",
                (f'<p class="meta">Built {datetime.now(UTC):%Y-%m-%d %H:%M} UTC from publication run '
                f'{escape(str(pub.get("run_id")))}, published {escape(str(pub.get("published_at")))} UTC. '
                f"Charges through {escape(str(parts.get('charges_through') or 'unknown'))} (the last day a bill or API "
                "invoice covers). Amounts are rounded to cents here; the CSV beside this file has them exact.</p>"),
                (f'<p class="meta"><a href="{escape(stem)}.csv">This report as CSV (exact amounts)</a> · '
                 '<a href="../index.html">Every team report</a></p>' if stem else "")]
    for f in parts["figures"]:
        sections += [f'<section class="block"><h2>Invoice → Chargeback → All-in showback ({escape(f["currency"])})</h2>',
                     figures_html(f),
                     bridge_html(f) if parts.get("showback") is not None else _missing(parts, "showback")]
        waste = parts.get("waste", {}).get(f["currency"])
        if waste is not None:
            share = f"{float(waste['waste'] / waste['all_in']):.1%}" if waste["all_in"] else "n/a"
            sections.append(f'<p>Idle cost: {escape(fmt_money(waste["idle"], f["currency"]))} · waste share (idle + '
                            f"retries + failures) of the all-in showback: {escape(share)}</p>")
        sections.append("</section>")
    sections.append(parts.get("reporting", {}).get("html", ""))
    sections.append("<h2>Chargeback</h2>")
    if charges.empty:
        sections.append('<p class="note">No invoice lines or API spend were charged to this team this month; its '
                        "cost is all in the all-in showback (work on no bill).</p>")
    for r in records(charges):
        items = [(column_label(c, None).replace(" (currency)", ""), r[c]) for c in CHARGE_COMPONENTS
                 if c in r and r[c]]
        sections.append(svg_bars(items, r["currency"]))
    if not charges.empty:
        cols = ["currency", *[c for c in ("basis", *BASES, *CHARGE_COMPONENTS, "total_cost", "charge_lines")
                              if c in charges]]
        sections.append(_html_table(charges, {*BASES, *CHARGE_COMPONENTS, "total_cost"}, columns=cols))
    sections.append("<h2>Budget</h2>")
    budgets, budget = parts.get("budgets"), [c for c in BUDGET_COLUMNS if c in charges]
    if budgets is not None and not budgets.empty:
        cols = ["currency", "budget_monthly", "chargeback_total", "budget_remaining_chargeback", "showback_total",
                "budget_remaining_showback"]
        sections.append(_html_table(budgets, set(cols[1:]), columns=cols))
    elif budget and not charges.empty:
        sections.append(_html_table(charges, {"total_cost", *budget}, columns=["currency", "total_cost", *budget]))
    else:
        sections.append('<p class="note">Budgets are not published yet.</p>')
    showback = parts.get("showback")
    if showback is not None and not showback.empty:
        sections.append("<h2>All-in showback by component</h2>")
        cols = ["currency", "source", "bridge_step", "component", "cost_basis", "amount"]
        named = showback[cols].assign(component=showback["component"].map(value_label))  # words, not column names
        sections.append(_html_table(named, {"amount"}))
    sections.append("<h2>Unit cost of the team's workloads</h2>")
    units = parts.get("units")
    if units is None:
        sections.append(_missing(parts, "units"))
    elif units.empty:
        sections.append('<p class="note">No workload unit costs for this month.</p>')
    else:
        cols = ["workload_id", "currency", *[c for c in UNIT_COLUMNS if c in units]]
        sections.append(_html_table(units, {"all_in_cost", "waste_cost"}, columns=cols,
                                    unit_costs=frozenset({"effective_unit_cost", "naive_unit_cost"})))
        sections.append(svg_bars([(f"{w} waste", v) for w, v in zip(units["workload_id"], units["waste_cost"])],
                                 units["currency"].iloc[0]))
    sections.append("<h2>GPU-hours and idle time</h2>")
    util = parts.get("util")
    if util is None:
        sections.append(_missing(parts, "util"))
    else:
        sections.append(_html_table(util, set(), columns=[c for c in util.columns if c not in ("period", "team_id")])
                        if not util.empty
                        else '<p class="note">No GPU utilisation recorded this month.</p>')
    sections.append(parts.get("anomalies_html", ""))
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Team cost report {escape(team)} '
            f'{escape(period)}</title><style>{CSS}</style></head><body>{"".join(sections)}</body></html>')


def _write_one(folder: Path, stem: str, team: str, label: str, parts: dict[str, Any], pub: dict[str, Any]) -> list[Path]:
    html_path, csv_path = folder / f"{stem}.html", folder / f"{stem}.csv"
    html_path.write_text(_html(team, label, parts, pub, stem), encoding="utf-8")
    with csv_path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["section", "team_id", "month", "currency", "item", "metric", "value", "run_id", "published_at"])
        # Names are untrusted: a text cell that a spreadsheet would run as a formula is quoted; amounts stay numbers.
        writer.writerows([exact(csv_cell(v)) for v in row] for row in _csv_rows(team, label, parts, pub))
    return [html_path, csv_path]


def write_team_reports(serving_path: Path, out_dir: Path, team: str | None = None,
                       month: str | None = None) -> list[Path]:
    """Write out_dir/<YYYY-MM>/<team>.html and .csv per team and month with any cost (chargeback or all-in
    showback), then out_dir/index.html listing every report of the publication; returns the paths written."""
    if month is not None and not re.fullmatch(r"\d{4}-\d{2}", month):
        raise ValueError(f"month must look like YYYY-MM, got {month!r}")
    with serving.reading(serving_path):  # one connection for the ~10 queries per report
        return _write_all(serving_path, Path(out_dir), team, month)


def _write_all(serving_path: Path, out_dir: Path, team: str | None, month: str | None) -> list[Path]:
    period = date.fromisoformat(f"{month}-01") if month else None
    pub = serving.publication(serving_path) or {}
    keys = serving.report_keys(serving_path)
    frames, anomalies = TeamMonthFrames(serving_path), TeamAnomalyReader(serving_path)
    written: list[Path] = []
    entries: list[dict[str, Any]] = []
    for period_start, group in keys.groupby("period", sort=True):
        label = f"{pd.Timestamp(period_start):%Y-%m}"
        folder = Path(out_dir) / label
        for team_id, stem in _unique_names(sorted(group["team_id"].unique())).items():
            wanted = (team is None or team_id == team) and (period is None or period_start == period)
            if wanted:
                folder.mkdir(parents=True, exist_ok=True)
                parts = _team_month(serving_path, frames, team_id, period_start, anomalies)
                written += _write_one(folder, stem, team_id, label, parts, pub)
            entries.append({"month": label, "team": team_id, "stem": stem, "written": (folder / f"{stem}.html").exists(),
                            "figures": parts["figures"] if wanted else None})
    # Figures for reports not rewritten this time come from the same frames (cheap, exact).
    missing = [e for e in entries if e["figures"] is None]
    for e in missing:
        first = date.fromisoformat(f"{e['month']}-01")
        ch, sb = frames.slice("charges", e["team"], first), frames.slice("showback", e["team"], first)
        currencies = sorted(set(ch["currency"]) | (set(sb["currency"]) if sb is not None else set()))
        e["figures"] = [team_bridge(ch, sb, c) for c in currencies]
    written.append(write_index(Path(out_dir), entries, pub, CSS))
    return written
