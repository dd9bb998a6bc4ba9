"""Overview: the three figures (Invoice, Chargeback, All-in showback) with their bridge; invoice by team, provider,
GPU model and all-in cost by workload type over time; unit costs; waste; unpriced GPU-hours."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import streamlit as st

from dashboards import filters, money, ui
from warehouse import serving

path = ui.serving_db()
st.title("Overview")

sel = filters.shared(path, "overview", use=("team", "month", "currency"))
team, month, currency = sel.team, sel.month, sel.currency
cur = currency or ""
provider = ui.pick("Provider (invoice only)", ui.load(serving.distinct, path, "ledger_focus", "ProviderName"),
                   "ov_provider")

by_team = ui.guard(serving.spend_by, path, "team", team=team, provider=provider, start=month, end=month)
units = ui.guard(serving.unit_costs, path, team=team, start=month, end=month)
if units is not None and "currency" in units:
    units = units[units["currency"] == currency]  # never add amounts across currencies

figures = ui.guard(serving.figures, path, team=team, start=month, end=month, currency=currency)
invoice, note = None, ""
if provider is not None and by_team is not None:
    # The provider filter narrows the invoice only; chargeback and showback are per team, not per provider.
    invoice = money.total(by_team[by_team["currency"] == currency], "cost") or 0
    note = f" Provider filter: {provider} only; the other two figures cover every provider."
money.three_figures(figures, currency, team, invoice=invoice, invoice_note=note)
money.bridge(path, month, currency)

col1, col2, col3 = st.columns(3)
if by_team is not None:
    spend = by_team[(by_team["currency"] == currency) & (by_team["cost"] != 0)]
    # '(unallocated)', '(idle)' and '(none)' carry cost no team owns: they are not teams.
    col1.metric("Teams on the invoice", int(spend.loc[~spend["team"].str.startswith("("), "team"].nunique()))
if units is not None and not units.empty:
    all_in = sum(units["all_in_cost"].dropna(), 0)
    waste = sum(units["waste_cost"].dropna(), 0)
    col2.metric("Waste share (idle + retries + failures)", f"{float(waste / all_in):.1%}" if all_in else "n/a",
                help="Idle capacity, retry waste and failure waste over the all-in cost of every workload shown.")
gaps = ui.guard(serving.unpriced_gpu_hours, path)
if gaps is not None:
    hours = float(sum(gaps["gpu_hours"], 0.0))
    col3.metric("Unpriced GPU-hours", f"{hours:,.1f}",
                help="GPU-hours no bill line, price or owned-hardware rate covers; never counted as $0. "
                     "Listed by reason on the Data quality page.")

st.subheader(f"Spend per month ({cur})")
st.caption("Team, provider and GPU model: the invoice (BilledCost, by the bill line's tags). Workload type: the "
           "all-in cost of the unit-cost model.")
NAMES = {"team": "Team", "provider": "Provider", "gpu_model": "GPU model", "workload_type": "Workload type"}
for dimension, title in [("team", "Invoice by team"), ("provider", "Invoice by provider"),
                         ("gpu_model", "Invoice by GPU model"), ("workload_type", "All-in cost by workload type")]:
    df = by_team if dimension == "team" else ui.guard(
        serving.spend_by, path, dimension, team=team, provider=provider, start=month, end=month)
    if df is None:
        continue
    df = ui.to_float(df[df["currency"] == currency])
    if df.empty:
        st.caption(f"{title}: nothing for this selection.")
        continue
    df["month"] = df["period"].map(ui.month)
    ui.plot(px.bar(df, x="month", y="cost", color=dimension, title=f"{title} ({cur})",
                   labels={"cost": f"Spend ({cur})", "month": "Billing month", dimension: NAMES[dimension]}),
            money=True)

st.subheader(f"All-in vs naive unit cost ({cur})")
st.caption("Naive = GPU cost over produced outputs; all-in = every cost over accepted outputs (latest month per "
           "workload, production basis).")
if units is not None and not units.empty:
    production = units[units["basis"] == "production"] if "basis" in units else units
    latest = production.sort_values("period").groupby("workload_id", as_index=False).tail(1)
    table = pd.DataFrame({
        "Workload": latest["workload_id"], "Team": latest["team_id"], "Month": latest["period"].map(ui.month),
        "Unit of success": latest["unit_of_success"],
        f"Naive cost per produced output ({cur})": [ui.unit_cost(v, cur) for v in latest["naive_unit_cost"]],
        f"All-in cost per accepted output ({cur})": [ui.unit_cost(v, cur) for v in latest["effective_unit_cost"]],
        "All-in / naive": [f"{float(e / n):.2f}x" if n else "n/a"
                           for e, n in zip(latest["effective_unit_cost"], latest["naive_unit_cost"])],
    })
    ui.table(table, "unit_costs_latest", raw=latest)

    share = ui.to_float(units.groupby("period", as_index=False)[["waste_cost", "all_in_cost"]].agg(
        lambda s: sum(s.dropna(), 0)))
    share["waste_share"] = share["waste_cost"] / share["all_in_cost"]
    share["month"] = share["period"].map(ui.month)
    ui.plot(px.bar(share, x="month", y="waste_share", title="Waste share of all-in cost (idle + retries + failures)",
                   labels={"waste_share": "Share of all-in cost", "month": "Month"}), share=True)

util = ui.guard(serving.utilisation, path, team=team, start=month, end=month)
if util is not None and not util.empty:
    util = ui.to_float(util)
    util["month"] = util["period"].map(ui.month)
    ui.plot(px.bar(util, x="month", y="idle_share", color="team_id", barmode="group",
                   title="Idle share of billed GPU-hours, per team",
                   labels={"idle_share": "Idle share of billed GPU-hours", "month": "Month", "team_id": "Team"}),
            share=True)
