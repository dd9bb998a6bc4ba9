"""A team's three figures and its bridge for one month, and the index page of every team report.

The team's bridge mirrors fct_cost_bridge for one team: its share of the invoice (billed_cost) ->
+ amortisation adjustments (amortised_cost - billed_cost) -> + API spend -> = Chargeback (total_cost)
-> + the cost-model showback lines per bridge step -> = All-in showback (Σ fct_showback_monthly.amount).
On the billed basis the amortisation step comes after Chargeback, as in the mart. Money stays Decimal.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from html import escape
from pathlib import Path
from typing import Any

import pandas as pd

from reporting.formatting import FIGURES, basis_label, definition, fmt_money
from reporting.team_month_frames import records
from warehouse import serving, serving_screens

COST_MODEL_STEPS = ("Run-priced work not on a bill", "Owned hardware", "Estimates", "Platform labour",
                    "Idle not on a bill")
ZERO = Decimal(0)


def _sum(rows: list[dict[str, Any]], column: str) -> Decimal:
    """Σ of a column over records, missing values (None, NaN) left out; ZERO when the column is absent."""
    return sum((Decimal(r[column]) for r in rows if column in r and not pd.isna(r[column])), ZERO)


def team_bridge(charges: pd.DataFrame, showback: pd.DataFrame | None, currency: str) -> dict[str, Any]:
    """Figures and bridge lines (step, kind, amount, running total) of one team, month and currency."""
    # Records, not boolean masks: a report asks this per currency, a year of reports ~100 times, and a
    # pandas filter costs more than summing the few rows of a team's month in Python.
    cb = [r for r in records(charges) if r["currency"] == currency]
    sb = ([r for r in records(showback) if r["currency"] == currency]
          if showback is not None and not showback.empty else None)
    bases = {r["basis"] for r in cb if not pd.isna(r["basis"])} if "basis" in charges else set()
    basis = ", ".join(sorted(bases)) if "basis" in charges and cb else None
    billed, amortised = _sum(cb, "billed_cost"), _sum(cb, "amortised_cost")
    api, chargeback = _sum(cb, "api_cost"), _sum(cb, "total_cost")
    showback_total = _sum(sb or [], "amount") if showback is not None else None
    amortisation = [("Amortisation adjustments", "add", amortised - billed)] if "amortised_cost" in charges else []
    before = [("Invoice (team's share)", "start", billed), *([] if basis == "billed" else amortisation),
              ("API spend", "add", api)]
    lines = [*before, ("Chargeback", "subtotal", chargeback), *(amortisation if basis == "billed" else [])]
    if sb is not None:
        model = [r for r in sb if r["source"] != "chargeback"] if "source" in showback else []
        lines += [(step, "add", _sum([r for r in model if r["bridge_step"] == step], "amount"))
                  for step in COST_MODEL_STEPS]
        other = _sum([r for r in model if r["bridge_step"] not in COST_MODEL_STEPS], "amount")
        if other:
            lines.append(("Other cost-model lines", "add", other))
    running, out = ZERO, []
    for step, kind, amount in lines:
        if kind == "subtotal":
            if running != amount:  # the team's lines do not close: say so rather than hide it
                out.append(("Not explained by the steps above", "add", amount - running, amount))
            running = amount
        else:
            running += amount
        out.append((step, kind, amount, running))
    if showback_total is not None:
        if running != showback_total:
            out.append(("Not explained by the steps above", "add", showback_total - running, showback_total))
        out.append(("All-in showback", "total", showback_total, showback_total))
    return {"currency": currency, "basis": basis, "invoice": billed, "chargeback": chargeback,
            "showback": showback_total, "bridge": out}


def figures_html(fig: dict[str, Any]) -> str:
    """The three figures of one currency with their definitions and the basis."""
    cur = fig["currency"]
    values = {"Invoice": fig["invoice"], "Chargeback": fig["chargeback"], "All-in showback": fig["showback"]}
    cells = []
    for name in FIGURES:
        shown = fmt_money(values[name], cur) if values[name] is not None else "not published"
        label = "Invoice (team's share)" if name == "Invoice" else name
        cells.append(f'<td><div class="fig">{escape(label)}: {escape(shown)}</div>'
                     f'<div class="def">{escape(definition(name, fig["basis"]))}</div></td>')
    basis = f'<p class="meta">Chargeback basis: {escape(basis_label(fig["basis"]))}.</p>' if fig["basis"] else ""
    return f'<table class="figs"><tr>{"".join(cells)}</tr></table>{basis}'


def bridge_html(fig: dict[str, Any]) -> str:
    """The team's bridge lines; zero 'add' steps are left out (they explain nothing)."""
    rows = []
    for step, kind, amount, running in fig["bridge"]:
        if kind == "add" and not amount:
            continue
        name = f"= {step}" if kind in ("subtotal", "total") else (step if kind == "start" else f"+ {step}")
        strong = ' style="font-weight:600"' if kind in ("subtotal", "total") else ""
        rows.append(f"<tr{strong}><td>{escape(name)}</td><td class=\"n\">{escape(fmt_money(amount, fig['currency']))}"
                    f"</td><td class=\"n\">{escape(fmt_money(running, fig['currency']))}</td></tr>")
    return ("<table><thead><tr><th>step</th><th>amount</th><th>running total</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def index_html(entries: list[dict[str, Any]], pub: dict[str, Any], css: str) -> str:
    """HOME/reports/index.html: every (month, team) report with its figures per currency and links."""
    rows = []
    for e in sorted(entries, key=lambda e: (e["month"], e["team"])):
        figs = e["figures"] or [{"currency": "", "invoice": None, "chargeback": None, "showback": None}]
        for i, f in enumerate(figs):
            links = "" if i else (f'<a href="{escape(e["month"])}/{escape(e["stem"])}.html">HTML</a> · '
                                  f'<a href="{escape(e["month"])}/{escape(e["stem"])}.csv">CSV</a>'
                                  if e["written"] else "not written yet (gpu-ledger report)")
            money = "".join(f'<td class="n">{escape(fmt_money(f[k], f["currency"]) if f[k] is not None else "n/a")}</td>'
                            for k in ("invoice", "chargeback", "showback"))
            rows.append(f"<tr><td>{escape(e['month'])}</td><td>{escape(e['team'])}</td>"
                        f"<td>{escape(f['currency'])}</td>{money}<td>{links}</td></tr>")
    head = "".join(f"<th>{h}</th>" for h in ("month", "team", "currency", "Invoice (team's share)", "Chargeback",
                                             "All-in showback", "report"))
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Team cost reports</title>'
            f"<style>{css}</style></head><body><h1>Team cost reports</h1>"
            f'<p class="meta">Built {datetime.now(UTC):%Y-%m-%d %H:%M} UTC from publication run '
            f'{escape(str(pub.get("run_id")))}, published {escape(str(pub.get("published_at")))} UTC. One report per '
            f"team and month with any cost in the chargeback or the all-in showback ({len(entries)} reports).</p>"
            f"<p class=\"meta\">{' '.join(f'{n}: {escape(definition(n))}' for n in FIGURES)}</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></body></html>")


def write_index(out_dir: Path, entries: list[dict[str, Any]], pub: dict[str, Any], css: str) -> Path:
    path = Path(out_dir) / "index.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(index_html(entries, pub, css), encoding="utf-8")
    return path


def in_reporting_currency(path: Path, team: str, period: Any, found: pd.DataFrame | None = None) -> dict[str, Any]:
    """The team's month with every currency in the reporting currency (fct_team_budget_converted) and the rates
    used, as an HTML section and long CSV rows (metric, value, currency); chargeback to the invoice stays in
    the billing currency in the sections above. `found`: the team's month of fct_team_budget_converted when the
    caller has read it already."""
    if "fct_team_budget_converted" not in serving.schema(path):
        return {"html": "", "rows": []}
    if found is None:
        found = serving.query(path, "select * from fct_team_budget_converted where team_id = ? and period = ?::date",
                              [team, period])
    used = serving_screens.rates_used(path)
    rates = (f"Rates: {escape(str(used['sources']))}, observations {used['first']} .. {used['last']}; each month's "
             "figures at the month's rate (the invoice's effective rate, else the rate of the month's first day); "
             f"a day without its own rate takes the last one at most {int(used['max_age'] or 0)} days earlier."
             if used else "No exchange rates published: nothing is converted.")
    if found.empty:
        return {"html": f'<h2>All currencies in one</h2><p class="note">No cost this month.</p><p class="meta">{rates}</p>',
                "rows": []}
    r = found.iloc[0]
    rc = str(r["reporting_currency"])
    lines = [(f"Chargeback {escape(fmt_money(r['chargeback_reporting'], rc))} · all-in showback "
              f"{escape(fmt_money(r['showback_reporting'], rc))} (native: {escape(str(r['native_spend']))}; "
              f"month rates into {escape(rc)}: {escape(str(r['spend_rates'] or 'none'))}).")]
    if pd.notna(r["budget_monthly"]):
        bc = str(r["budget_currency"])
        lines.append(f"Budget {escape(fmt_money(r['budget_monthly'], bc))}"
                     + (f" = {escape(fmt_money(r['budget_reporting'], rc))}" if bc != rc else "")
                     + f"; compared in {escape(bc)}: chargeback {escape(fmt_money(r['chargeback_in_budget_currency'], bc))},"
                     f" left {escape(fmt_money(r['budget_remaining_chargeback'], bc))}; all-in showback "
                     f"{escape(fmt_money(r['showback_in_budget_currency'], bc))}, left "
                     f"{escape(fmt_money(r['budget_remaining_showback'], bc))}.")
    if pd.notna(r["fx_gap_reason"]):
        lines.append(f"Not converted: {escape(str(r['fx_gap_reason']))}.")
    html = (f"<h2>All currencies in one ({escape(rc)}, the reporting currency)</h2><p>" + "<br>".join(lines)
            + f'</p><p class="meta">{rates} Chargeback to the invoice stays in the billing currency above.</p>')
    rows = [(m, r[m], rc) for m in ("chargeback_reporting", "showback_reporting", "budget_reporting")]
    rows += [(m, r[m], r["budget_currency"]) for m in ("budget_monthly", "chargeback_in_budget_currency",
                                                        "budget_remaining_chargeback", "showback_in_budget_currency",
                                                        "budget_remaining_showback")]
    return {"html": html, "rows": [(m, v, c) for m, v, c in rows if v is not None and not pd.isna(v)]}
