"""Chargeback: the three figures, per team and month on both bases, reconciled to the invoice both ways,
budget vs chargeback and vs all-in showback, CSV export."""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from dashboards import money, ui
from reporting.formatting import basis_label, column_label
from warehouse import serving

MONEY = ["total_cost", "billed_cost", "amortised_cost", "unused_commitment", "direct_cost", "shared_cost",
         "idle_cost", "api_cost", "credits", "tax", "budget_monthly", "budget_remaining", "forecast_month_end"]

path = ui.serving_db()
st.title("Chargeback")
st.caption("One row per team, billing period and currency. '(unallocated)' and '(idle)' rows carry cost no team "
           "owns yet, so a period's rows add up to the invoice.")

team = ui.pick("Team", ui.load(serving.distinct, path, "fct_chargeback_monthly", "team_id"), "cb_team")
month = ui.pick("Month", ui.load(serving.distinct, path, "fct_chargeback_monthly", "billing_period_start"), "cb_month",
                fmt=ui.month)
currency = ui.pick("Currency", ui.load(serving.distinct, path, "fct_chargeback_monthly", "currency", True), "cb_currency",
                   all_option=False)

figures = ui.guard(serving.figures, path, team=team, start=month, end=month, currency=currency)
money.three_figures(figures, currency, team)
money.bridge(path, month, currency)

rows = ui.guard(serving.chargeback, path, team=team, month=month, currency=currency)
if rows is not None:
    c1, c2 = st.columns(2)
    c1.metric("Teams", int(rows["team_id"].nunique()))
    c2.metric("Charge lines", f"{int(rows['charge_lines'].sum()):,}" if "charge_lines" in rows else "n/a")
    for basis in sorted(set(rows["basis"].dropna())) if "basis" in rows else []:
        st.caption(f"Chargeback (total) = {basis_label(basis)} + API spend. Invoice share (billed) is the same "
                   "allocation on BilledCost; both are kept.")
    shown = ui.money_table(rows, MONEY)
    shown["billing_period_start"] = shown["billing_period_start"].map(ui.month)
    order = ["team_id", "billing_period_start", "currency", "basis", *[c for c in MONEY if c in shown], "charge_lines"]
    shown = shown[[c for c in order if c in shown]]
    shown.columns = [column_label(c, currency) for c in shown.columns]
    # A printed table (selectable text) for a page's worth of rows; a scrolling grid beyond that.
    (st.table if len(shown) <= 100 else st.dataframe)(shown, hide_index=True)
    st.download_button("Download CSV (exact amounts)", rows.to_csv(index=False).encode(),
                       file_name=f"chargeback_{ui.month(month) if month else 'all'}_{currency}.csv", mime="text/csv")

st.subheader("Budget vs chargeback vs all-in showback")
budgets = ui.guard(serving.team_budgets, path, team=team, month=month, currency=currency)
if budgets is not None and not budgets.empty:
    cols = ["team_id", "period", "currency", "budget_monthly", "chargeback_total", "budget_remaining_chargeback",
            "showback_total", "budget_remaining_showback"]
    shown = ui.money_table(budgets, cols[3:])
    shown["period"] = shown["period"].map(ui.month)
    shown = shown[cols]
    shown.columns = [column_label(c, currency) for c in cols]
    st.table(shown, hide_index=True)
    st.caption("A team can be within its chargeback budget while its work (all-in showback) costs more: run-priced "
               "work, estimates and labour are on no invoice. No budget in this currency shows n/a.")
    flat = ui.to_float(budgets)
    flat["month"] = flat["period"].map(ui.month)
    long = flat.melt(id_vars=["team_id", "month"], value_vars=["budget_monthly", "chargeback_total", "showback_total"],
                     var_name="measure", value_name="amount")
    long["measure"] = long["measure"].map(lambda c: column_label(c, currency))
    ui.plot(px.bar(long, x="team_id", y="amount", color="measure", barmode="group", facet_col="month",
                   title=f"Budget vs chargeback vs all-in showback ({currency})"))

st.subheader("Reconciliation to the invoice")
st.caption("Per billing period and currency, exact to the cent: (1) Σ invoice share (billed_cost) vs Σ FOCUS "
           "BilledCost; (2) Σ chargeback (total_cost) vs the invoice on the chargeback basis (BilledCost or "
           "EffectiveCost) + API spend (its own invoice).")
recon = ui.guard(serving.reconciliation, path)
if recon is not None:
    if currency:
        recon = recon[recon["currency"] == currency]
    if month:
        recon = recon[recon["period"] == month]
    broken = recon[~(recon["billed_reconciled"].astype(bool) & recon["total_reconciled"].astype(bool))]
    if broken.empty:
        st.success(f"All {len(recon)} period/currency totals reconcile to the invoice, on both the billed and the "
                   "chargeback basis.")
    else:
        st.error(f"{len(broken)} period/currency totals do not reconcile to the invoice: "
                 + ", ".join(f"{ui.month(p)} {c}" for p, c in zip(broken["period"], broken["currency"])) + ".")
    money_cols = ["invoice_billed", "chargeback_billed", "billed_difference", "invoice_basis", "api_spend",
                  "invoice_total", "chargeback_total", "total_difference"]
    shown = ui.money_table(recon, money_cols)
    shown["period"] = shown["period"].map(ui.month)
    for flag in ("billed_reconciled", "total_reconciled"):
        shown[flag] = shown[flag].map({True: "yes", False: "NO"})
    c = currency or "currency"
    st.table(shown.rename(columns={
        "period": "Month", "currency": "Currency", "basis": "Basis",
        "invoice_billed": f"Invoice, Σ BilledCost ({c})", "chargeback_billed": f"Σ invoice share, billed ({c})",
        "billed_difference": f"Difference, billed ({c})", "billed_reconciled": "Billed reconciles",
        "invoice_basis": f"Invoice on chargeback basis ({c})", "api_spend": f"API spend ({c})",
        "invoice_total": f"Invoice on basis + API ({c})", "chargeback_total": f"Σ Chargeback ({c})",
        "total_difference": f"Difference, chargeback ({c})", "total_reconciled": "Chargeback reconciles",
    }), hide_index=True)
