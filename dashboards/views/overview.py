"""Overview: what we spend, on what, and what to do. First screen: the three figures, the bridge between them as a
waterfall, the all-in showback split by how it was measured (with a flag when one estimate dominates), idle cost,
waste share, unpriced GPU-hours and the three largest actions; every figure follows the team and month filters.
Below: invoice by team, provider, GPU model and all-in cost by workload type over time; unit costs; idle share."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd
import plotly.express as px
import streamlit as st

from dashboards import filters, money, ui
from reporting.formatting import fmt_money
from reporting.safe_text import md_text
from warehouse import serving
from warehouse import serving_overview as overview

path = ui.serving_db()
st.title("Overview")

sel = filters.shared(path, "overview", use=("team", "month", "currency"),
                     native_only="The Overview shows amounts as billed, one currency at a time; every currency "
                                 "converted is on the Chargeback page.")
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
scope = f"team {team}" if team else "company-wide"
when = ui.month(month) if month else "every month"
waste = ui.guard(overview.idle_and_waste, path, team=team, month=month, currency=currency)
idle = (f"Idle cost ({cur})", fmt_money(waste["idle"], cur) if waste else "not published",
        "GPU capacity paid for and not used: idle on bills, in run-priced pools and on owned sites.")
money.three_figures(figures, currency, team, invoice=invoice, invoice_note=note, extra=idle)

split = ui.guard(overview.showback_split, path, team=team, month=month, currency=currency)
all_in = sum(split.values(), Decimal(0)) if split is not None else Decimal(0)
left, right = st.columns([3, 2], gap="large")
with left:
    lines = money.bridge_lines(path, team, month, currency)
    if lines:
        money.waterfall(lines, cur, f"Invoice → Chargeback → All-in showback ({scope}, {when}, {cur})")
    if split is not None:
        st.markdown(f"**What the all-in showback is made of** ({md_text(scope)}, {when})")
        ui.table(pd.DataFrame({
            "Part": list(split), f"Amount ({cur})": [fmt_money(v, None) for v in split.values()],
            "Share": [f"{float(v / all_in):.1%}" if all_in else "n/a" for v in split.values()]}),
            f"showback_split_{team or 'company'}_{when}_{cur}",
            raw=pd.DataFrame({"part": list(split), "amount": list(split.values()), "currency": cur}))
with right:
    st.markdown(f"**Largest actions** ({md_text(scope)}, {cur} a month)")
    actions = ui.guard(overview.top_actions, path, team=team, currency=currency)
    if actions is not None and actions.empty:
        st.caption("No action found: no cheaper route passes its gates and no spend spike is open.")
    elif actions is not None:
        for i, a in enumerate(actions.itertuples(index=False), start=1):
            value = fmt_money(a.monthly_value, a.currency)
            if a.kind == "switch":
                text = (f"**{value} a month**: switch {md_text(a.workload_id)} to {md_text(a.candidate)} "
                        f"(evidence {md_text(a.evidence)}; every gate passes).")
            elif a.kind == "benchmark":
                text = (f"**{value} a month** if confirmed: benchmark {md_text(a.workload_id)} on "
                        f"{md_text(a.candidate)}.")
            else:
                text = f"**{value}** above its band: investigate the spend spike of {md_text(a.candidate)} on {a.day}."
            st.markdown(f"{i}. {text}")
        st.caption("Savings at equal demand (GPU decision page, every workload there) on each workload's latest "
                   "production month" + (", whatever the Month filter" if month else "")
                   + "; spikes from the Anomalies page.")
    top = ui.guard(overview.largest_estimate, path, team=team, month=month, currency=currency) if split else None
    share = top["amount"] / all_in if top and all_in else Decimal(0)
    if share > overview.DOMINANT_SHARE:
        what = f"workload {top['name']}" if top["is_workload"] else f"team {top['name']}'s work without a workload"
        st.warning(f"One estimate dominates: {float(share):.0%} of the all-in showback is the "
                   f"{md_text(top['pricing_status'])} GPU work of {md_text(what)} "
                   f"({top['gpu_hours']:,.0f} GPU-hours, {fmt_money(top['amount'], cur)}), not a bill.")
money.bridge(path, month, currency, team)

gaps = ui.guard(serving.unpriced_gpu_hours, path, team=team, month=month)
col1, col2, col3 = st.columns(3)
if waste is not None:
    col1.metric("Waste share (idle + retries + failures)",
                f"{float(waste['waste'] / waste['all_in']):.1%}" if waste["all_in"] else "n/a",
                help="Idle, retry and failure cost over the all-in showback of this selection.")
if gaps is not None:
    col2.metric("Unpriced GPU-hours", f"{float(sum(gaps['gpu_hours'], 0.0)):,.1f} GPU-hours",
                help="GPU-hours no bill line, price or owned-hardware rate covers in this selection; never counted "
                     "as $0. Listed by reason on the Data quality page.")
if by_team is not None:
    spend = by_team[(by_team["currency"] == currency) & (by_team["cost"] != 0)]
    # '(unallocated)', '(idle)' and '(none)' carry cost no team owns: they are not teams.
    col3.metric("Teams on the invoice", int(spend.loc[~spend["team"].str.startswith("("), "team"].nunique()))

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


by_month = ui.guard(overview.waste_by_month, path, team=team, month=month, currency=currency)
if by_month is not None and not by_month.empty:
    share = ui.to_float(by_month)
    share["waste_share"] = [w / a if a else None for w, a in zip(share["waste"], share["all_in"])]
    share["month"] = share["period"].map(ui.month)
    ui.plot(px.bar(share, x="month", y="waste_share", title=f"Waste share of the all-in showback, idle included "
                   f"({scope})", labels={"waste_share": "Share of all-in showback", "month": "Month"}), share=True)

util = ui.guard(serving.utilisation, path, team=team, start=month, end=month)
if util is not None and not util.empty:
    util = ui.to_float(util)
    util["month"] = util["period"].map(ui.month)
    ui.plot(px.bar(util, x="month", y="idle_share", color="team_id", barmode="group",
                   title="Idle share of billed GPU-hours, per team",
                   labels={"idle_share": "Idle share of billed GPU-hours", "month": "Month", "team_id": "Team"}),
            share=True)
