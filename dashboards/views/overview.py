"""Overview: the three figures (Invoice, Chargeback, All-in showback) with their bridge; invoice by team, provider,
GPU model and all-in cost by workload type over time; unit costs; waste; unpriced GPU-hours."""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from dashboards import money, ui
from reporting.formatting import fmt_unit_cost
from warehouse import serving

path = ui.serving_db()
st.title("Overview")

team = ui.pick("Team", ui.load(serving.distinct, path, "fct_chargeback_monthly", "team_id"), "ov_team")
provider = ui.pick("Provider", ui.load(serving.distinct, path, "ledger_focus", "ProviderName"), "ov_provider")
currencies = (ui.load(serving.distinct, path, "ledger_focus", "BillingCurrency", True)
              or ui.load(serving.distinct, path, "fct_chargeback_monthly", "currency", True))
currency = ui.pick("Currency", currencies, "ov_currency", all_option=False)
periods = ui.load(serving.distinct, path, "fct_chargeback_monthly", "billing_period_start")
start = ui.pick("From month", periods, "ov_start", fmt=ui.month)
end = ui.pick("To month", periods, "ov_end", fmt=ui.month)

by_team = ui.guard(serving.spend_by, path, "team", team=team, provider=provider, start=start, end=end)
units = ui.guard(serving.unit_costs, path, team=team, start=start, end=end)
if units is not None and "currency" in units:
    units = units[units["currency"] == currency]  # never add amounts across currencies

figures = ui.guard(serving.figures, path, team=team, start=start, end=end, currency=currency)
invoice, note = None, ""
if provider is not None and by_team is not None:
    # The provider filter narrows the invoice only; chargeback and showback are per team, not per provider.
    invoice = money.total(by_team[by_team["currency"] == currency], "cost") or 0
    note = f" Provider filter: {provider} only; the other two figures cover every provider."
money.three_figures(figures, currency, team, invoice=invoice, invoice_note=note)
money.bridge(path, start if start is not None and start == end else None, currency)

col1, col2, col3 = st.columns(3)
if by_team is not None:
    spend = by_team[by_team["currency"] == currency]
    col1.metric("Teams on the invoice", int(spend.loc[spend["cost"] != 0, "team"].nunique()))
if units is not None and not units.empty:
    all_in = sum(units["all_in_cost"].dropna(), 0)
    waste = sum(units["waste_cost"].dropna(), 0)
    col2.metric("Waste share (idle + retries + failures)", f"{float(waste / all_in):.1%}" if all_in else "n/a")
gaps = ui.guard(serving.unpriced_gpu_hours, path)
if gaps is not None:
    hours = float(sum(gaps["gpu_hours"], 0.0))
    col3.metric("Unpriced GPU-hours", f"{hours:,.1f}",
                help="GPU-hours no bill line, price or owned-hardware rate covers; never counted as $0. "
                     "Listed by reason on the Data quality page.")

st.subheader("Spend over time")
st.caption("Team, provider and GPU model: the invoice (BilledCost, by the bill line's tags). Workload type: the "
           "all-in cost of the unit-cost model.")
for dimension, title in [("team", "by team (invoice)"), ("provider", "by provider (invoice)"),
                         ("gpu_model", "by GPU model (invoice)"), ("workload_type", "by workload type (all-in cost)")]:
    df = by_team if dimension == "team" else ui.guard(
        serving.spend_by, path, dimension, team=team, provider=provider, start=start, end=end)
    if df is None:
        continue
    df = ui.to_float(df[df["currency"] == currency])
    if df.empty:
        st.caption(f"No spend {title} for this selection.")
        continue
    df["month"] = df["period"].map(ui.month)
    ui.plot(px.bar(df, x="month", y="cost", color=dimension, title=f"Spend {title} ({currency})",
                           labels={"cost": currency, "month": "billing period"}))

st.subheader("All-in vs naive unit cost")
st.caption("Naive = GPU cost over produced outputs; all-in = every cost over accepted outputs.")
if units is not None and not units.empty:
    latest = units.sort_values("period").groupby("workload_id", as_index=False).tail(1)
    table = latest[["workload_id", "team_id", "period", "currency", "unit_of_success",
                    "naive_unit_cost", "effective_unit_cost"]].copy()
    table["all_in / naive"] = [f"{float(e / n):.2f}x" if n else "n/a"
                               for e, n in zip(table["effective_unit_cost"], table["naive_unit_cost"])]
    for col in ("naive_unit_cost", "effective_unit_cost"):
        table[col] = [fmt_unit_cost(v, c) for v, c in zip(table[col], table["currency"])]
    table["period"] = table["period"].map(ui.month)
    st.table(table.reset_index(drop=True))

    share = ui.to_float(units.groupby("period", as_index=False)[["waste_cost", "all_in_cost"]].agg(
        lambda s: sum(s.dropna(), 0)))
    share["waste_share"] = share["waste_cost"] / share["all_in_cost"]
    share["month"] = share["period"].map(ui.month)
    ui.plot(px.line(share, x="month", y="waste_share", markers=True, title="Waste share of all-in cost")
                    .update_yaxes(tickformat=".0%"))

util = ui.guard(serving.utilisation, path, team=team, start=start, end=end)
if util is not None and not util.empty:
    util = ui.to_float(util)
    util["month"] = util["period"].map(ui.month)
    ui.plot(px.bar(util, x="month", y="idle_share", color="team_id", barmode="group",
                           title="Idle share of billed GPU-hours").update_yaxes(tickformat=".0%"))
