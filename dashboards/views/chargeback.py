"""Chargeback: per team and month, reconciled to the invoice, budget vs actual vs forecast, CSV export."""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from dashboards import ui
from reporting.formatting import fmt_money
from warehouse import serving

MONEY = ["total_cost", "direct_cost", "shared_cost", "idle_cost", "api_cost", "credits", "tax", "effective_cost",
         "budget_monthly", "budget_remaining", "forecast_month_end"]

path = ui.serving_db()
st.title("Chargeback")
st.caption("One row per team, billing period and currency. '(unallocated)' and '(idle)' rows carry cost no team "
           "owns yet, so a period's rows add up to the invoice.")

team = ui.pick("Team", ui.load(serving.distinct, path, "fct_chargeback_monthly", "team_id"), "cb_team")
month = ui.pick("Month", ui.load(serving.distinct, path, "fct_chargeback_monthly", "billing_period_start"), "cb_month",
                fmt=ui.month)
currency = ui.pick("Currency", ui.load(serving.distinct, path, "fct_chargeback_monthly", "currency", True), "cb_currency",
                   all_option=False)
rows = ui.guard(serving.chargeback, path, team=team, month=month, currency=currency)

if rows is not None:
    total = sum(rows["total_cost"], 0)
    c1, c2, c3 = st.columns(3)
    c1.metric(f"Total charged ({currency})", fmt_money(total, currency))
    c2.metric("Teams", int(rows["team_id"].nunique()))
    c3.metric("Charge lines", f"{int(rows['charge_lines'].sum()):,}" if "charge_lines" in rows else "n/a")
    shown = ui.money_table(rows, MONEY)
    shown["billing_period_start"] = shown["billing_period_start"].map(ui.month)
    order = ["team_id", "billing_period_start", "currency", *[c for c in MONEY if c in shown], "charge_lines"]
    shown = shown[[c for c in order if c in shown]].rename(columns={"billing_period_start": "month"})
    # A printed table (selectable text) for a page's worth of rows; a scrolling grid beyond that.
    (st.table if len(shown) <= 100 else st.dataframe)(shown, hide_index=True)
    st.download_button("Download CSV (exact amounts)", rows.to_csv(index=False).encode(),
                       file_name=f"chargeback_{ui.month(month) if month else 'all'}_{currency}.csv", mime="text/csv")

    st.subheader("Budget vs actual vs forecast")
    budget_cols = [c for c in ("budget_monthly", "forecast_month_end") if c in rows]
    if not budget_cols:
        st.info("Not published yet: fct_chargeback_monthly has no budget_monthly / forecast_month_end columns.")
    else:
        flat = ui.to_float(rows)
        flat["month"] = flat["billing_period_start"].map(ui.month)
        long = flat.melt(id_vars=["team_id", "month"], value_vars=["total_cost", *budget_cols],
                         var_name="measure", value_name="amount")
        ui.plot(px.bar(long, x="team_id", y="amount", color="measure", barmode="group", facet_col="month",
                               title=f"Actual vs budget vs forecast ({currency})"))

st.subheader("Reconciliation to the invoice")
st.caption("Sum of chargeback rows vs sum of ledger BilledCost, per billing period and currency, exact to the cent.")
recon = ui.guard(serving.reconciliation, path)
if recon is not None:
    broken = recon[~recon["reconciled"].astype(bool)]
    if broken.empty:
        st.success(f"All {len(recon)} period/currency totals reconcile to the invoice.")
    else:
        st.error(f"{len(broken)} period/currency totals do not reconcile to the invoice.")
    shown = ui.money_table(recon, ["chargeback_total", "invoice_total", "difference"])
    shown["period"] = shown["period"].map(ui.month)
    shown["reconciled"] = shown["reconciled"].map({True: "yes", False: "NO"})
    st.table(shown, hide_index=True)
