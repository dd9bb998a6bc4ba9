"""The three figures (Invoice -> Chargeback -> All-in showback) and their bridge, drawn the same way on
every page that shows money; the wording lives in `reporting.formatting` so reports say the same."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboards import ui
from reporting.formatting import FIGURES, basis_label, definition, fmt_money
from warehouse import serving


def total(df: pd.DataFrame | None, column: str) -> Decimal | None:
    """Exact sum of a money column (None when the column is absent or every value is null)."""
    if df is None or column not in df or df[column].isna().all():
        return None
    return sum(df[column].dropna(), Decimal(0))


def three_figures(figures: pd.DataFrame | None, currency: str | None, team: str | None = None,
                  invoice: Decimal | None = None, invoice_note: str = "") -> None:
    """Three metrics side by side, each with its one-line definition and the basis where it applies.

    `invoice` overrides the invoice figure (the Overview's provider filter narrows only the invoice)."""
    if figures is None:
        return
    rows = figures[figures["currency"] == currency] if currency else figures
    basis = ", ".join(sorted(set(rows["basis"].dropna()))) or None
    values = {"Invoice": total(rows, "invoice") if invoice is None else invoice,
              "Chargeback": total(rows, "chargeback"), "All-in showback": total(rows, "showback")}
    for col, name in zip(st.columns(3), FIGURES):
        label = f"{name} ({currency})" + (" · team's share" if name == "Invoice" and team else "")
        shown = values[name]
        col.metric(label, fmt_money(shown, currency) if shown is not None else "not published")
        col.caption(definition(name, basis) + (invoice_note if name == "Invoice" else ""))
    if basis:
        st.caption(f"Chargeback basis: {basis_label(basis)}. The bridge below shows every step between the figures.")


def bridge(path: Path, month: date | None, currency: str | None, expanded: bool = False) -> None:
    """The fct_cost_bridge steps for the selected month (else every month) and currency, one click away."""
    label = f"Bridge: Invoice → Chargeback → All-in showback ({ui.month(month) if month else 'every month'}, " \
            f"{currency})"
    with st.expander(label, expanded=expanded):
        steps = ui.guard(serving.cost_bridge, path, month=month, currency=currency)
        if steps is None:
            return
        if steps.empty:
            st.info("No bridge rows for this selection.")
            return
        shown = ui.money_table(steps, ["amount", "running_total"])
        shown["period"] = shown["period"].map(ui.month)
        shown["step"] = [f"= {s}" if k in ("subtotal", "total") else (s if k == "start" else f"+ {s}")
                         for s, k in zip(steps["step"], steps["step_kind"])]
        shown = shown.rename(columns={"period": "Month", "currency": "Currency", "step": "Step",
                                      "amount": "Amount", "running_total": "Running total"})
        ui.table(shown[["Month", "Currency", "Step", "Amount", "Running total"]],
                 f"bridge_{ui.month(month) if month else 'all'}_{currency}", raw=steps)
        st.caption("Amortisation adjustments = EffectiveCost - BilledCost (commitment fees spread over the usage they "
                   "cover). Run-priced work, estimates, labour and idle not on a bill are the unit-cost model's lines "
                   "that no invoice carries.")
