"""The three figures (Invoice -> Chargeback -> All-in showback) and their bridge, drawn the same way on
every page that shows money; the wording lives in `reporting.formatting` so reports say the same."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboards import ui
from reporting.formatting import FIGURES, basis_label, definition, fmt_money
from reporting.team_money import team_bridge
from warehouse import serving


def total(df: pd.DataFrame | None, column: str) -> Decimal | None:
    """Exact sum of a money column (None when the column is absent or every value is null)."""
    if df is None or column not in df or df[column].isna().all():
        return None
    return sum(df[column].dropna(), Decimal(0))


def three_figures(figures: pd.DataFrame | None, currency: str | None, team: str | None = None,
                  invoice: Decimal | None = None, invoice_note: str = "",
                  extra: tuple[str, str, str] | None = None) -> None:
    """Three metrics side by side, each with its one-line definition and the basis where it applies.

    `invoice` overrides the invoice figure (the Overview's provider filter narrows only the invoice). With
    `extra` (label, value, help) a fourth metric joins the row and the definitions move into each metric's help,
    so the row stays one line high (the Overview's first screen)."""
    if figures is None:
        return
    rows = figures[figures["currency"] == currency] if currency else figures
    basis = ", ".join(sorted(set(rows["basis"].dropna()))) or None
    values = {"Invoice": total(rows, "invoice") if invoice is None else invoice,
              "Chargeback": total(rows, "chargeback"), "All-in showback": total(rows, "showback")}
    cols = st.columns(4 if extra else 3)
    for col, name in zip(cols, FIGURES):
        label = f"{name} ({currency})" + (" · team's share" if name == "Invoice" and team else "")
        shown = values[name]
        text = definition(name, basis) + (invoice_note if name == "Invoice" else "")
        col.metric(label, fmt_money(shown, currency) if shown is not None else "not published",
                   help=text if extra else None)
        if not extra:
            col.caption(text)
    if extra:
        cols[3].metric(extra[0], extra[1], help=extra[2])
        if invoice_note:
            st.caption(invoice_note.strip())
    elif basis:
        st.caption(f"Chargeback basis: {basis_label(basis)}. The bridge below shows every step between the figures.")


def bridge_lines(path: Path, team: str | None, month: date | None, currency: str | None) -> list[tuple] | None:
    """(step, kind, amount, running total) of the bridge for one currency, over the selected month (else every
    month): the company's from fct_cost_bridge, one team's built from its own rows as its report builds it."""
    if team is not None:
        charges = ui.guard(serving.chargeback, path, team=team, month=month, currency=currency)
        rows = ui.guard(serving.showback, path, team=team, month=month, currency=currency)
        return None if charges is None else team_bridge(charges, rows, currency or "")["bridge"]
    steps = ui.guard(serving.cost_bridge, path, month=month, currency=currency)
    if steps is None:
        return None
    lines, running = [], Decimal(0)
    for (_, step, kind), amount in steps.groupby(["step_order", "step", "step_kind"], sort=True)["amount"].agg(
            lambda s: sum(s, Decimal(0))).items():
        running = amount if kind in ("subtotal", "total") else running + amount
        lines.append((step, kind, amount, running))
    return lines


def waterfall(lines: list[tuple], currency: str, title: str) -> None:
    """The bridge as a horizontal waterfall read top to bottom: the invoice first, every non-zero step as a named
    rise or fall, Chargeback and All-in showback as totals, each bar labelled with its amount; zero steps are
    listed under the chart."""
    shown = [ln for ln in lines if ln[1] != "add" or ln[2]]
    fig = go.Figure(go.Waterfall(
        orientation="h", y=[ui.plot_text(s) for s, *_ in shown], x=[float(a) for _, _, a, _ in shown],
        measure=["absolute" if k == "start" else ("total" if k in ("subtotal", "total") else "relative")
                 for _, k, _, _ in shown],
        text=[fmt_money(r if k in ("subtotal", "total") else a, currency) for _, k, a, r in shown],
        textposition="none", cliponaxis=False, connector={"line": {"color": "#999"}},
        hovertemplate="%{y}: %{text}<extra></extra>",
        totals={"marker": {"color": "#4c6ef5"}}, increasing={"marker": {"color": "#f08c00"}},
        decreasing={"marker": {"color": "#2b8a3e"}}))
    # Each amount sits right of its bar's right end: a fall's own "outside" label lands left of the bar, over the
    # step names when the bar is near zero.
    for step, kind, amount, running in shown:
        ends = (0.0, float(running)) if kind != "add" else (float(running) - float(amount), float(running))
        fig.add_annotation(x=max(ends), y=ui.plot_text(step), xanchor="left", xshift=4, showarrow=False,
                           text=fmt_money(running if kind in ("subtotal", "total") else amount, currency),
                           font={"size": 12})
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(rangemode="tozero", exponentformat="none", separatethousands=True, title_text=currency)
    fig.update_layout(title=title, showlegend=False, margin={"r": 110})
    ui.plot(fig, height=40 * len(shown) + 90, margin_top=40)
    zero = [s for s, k, a, _ in lines if k == "add" and not a]
    if zero:
        st.caption("Steps with nothing to add: " + ", ".join(zero) + ".")


def bridge(path: Path, month: date | None, currency: str | None, team: str | None = None,
           expanded: bool = False) -> None:
    """The bridge steps for the selected team (else the company), month (else every month) and currency as a
    table, one click away; its CSV holds the exact amounts."""
    who = f"team {team}" if team else "company-wide"
    label = f"Bridge as a table ({who}, {ui.month(month) if month else 'every month'}, {currency})"
    with st.expander(label, expanded=expanded):
        lines = bridge_lines(path, team, month, currency)
        if lines is None:
            return
        if not lines:
            st.info("No bridge rows for this selection.")
            return
        raw = pd.DataFrame(lines, columns=["step", "step_kind", "amount", "running_total"]).assign(currency=currency)
        shown = pd.DataFrame({
            "Step": [f"= {s}" if k in ("subtotal", "total") else (s if k == "start" else f"plus {s}")
                     for s, k, _, _ in lines],
            f"Amount ({currency})": [fmt_money(a, None) for _, _, a, _ in lines],
            f"Running total ({currency})": [fmt_money(r, None) for *_, r in lines]})
        ui.table(shown, f"bridge_{team or 'company'}_{ui.month(month) if month else 'all'}_{currency}", raw=raw)
        st.caption("Amortisation adjustments = EffectiveCost - BilledCost (commitment fees spread over the usage they "
                   "cover). Run-priced work, estimates, labour and idle not on a bill are the unit-cost model's lines "
                   "that no invoice carries.")
