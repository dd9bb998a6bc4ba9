"""Workloads: unit cost per workload over time with its cost components stacked; produced vs accepted."""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from dashboards import ui
from reporting.formatting import fmt_money, fmt_unit_cost
from warehouse import serving

path = ui.serving_db()
st.title("Workloads")

team = ui.pick("Team", ui.load(serving.distinct, path, "fct_workload_unit_cost", "team_id"), "wl_team")
workload = ui.pick("Workload", ui.load(serving.distinct, path, "fct_workload_unit_cost", "workload_id"), "wl_workload",
                   all_option=False)
units = ui.guard(serving.unit_costs, path, team=team, workload=workload)

if units is not None:
    if units.empty:
        st.info("No unit costs for this selection.")
    else:
        row = units.iloc[-1]
        currency, unit = row.get("currency"), row.get("unit_of_success") or "accepted output"
        c1, c2, c3, c4 = st.columns(4)
        c1.metric(f"All-in cost {ui.month(row['period'])}", fmt_money(row["all_in_cost"], currency))
        c2.metric(f"Effective cost per {unit}", fmt_unit_cost(row["effective_unit_cost"], currency))
        c3.metric("Naive cost per produced output", fmt_unit_cost(row["naive_unit_cost"], currency))
        c4.metric("Accepted / produced", f"{int(row['accepted_outputs'] or 0):,} / {int(row['produced_outputs'] or 0):,}")
        if row.get("unit_cost_note"):
            st.caption(str(row["unit_cost_note"]))

        # Components that are zero in every period only clutter the legend.
        components = [c for c in serving.UNIT_COST_COMPONENTS if c in units.columns and units[c].fillna(0).any()]
        flat = ui.to_float(units)
        flat["month"] = flat["period"].map(ui.month)
        # Components per accepted output, so the stack adds up to the effective unit cost.
        per_unit = flat[["month", *components]].copy()
        for c in components:
            per_unit[c] = flat[c] / flat["accepted_outputs"].where(flat["accepted_outputs"] > 0)
        long = per_unit.melt(id_vars="month", var_name="component", value_name="cost_per_accepted")
        ui.plot(px.bar(long, x="month", y="cost_per_accepted", color="component",
                               title=f"Cost per {unit} by component ({currency})"))
        ui.plot(px.line(flat, x="month", y=["effective_unit_cost", "naive_unit_cost"], markers=True,
                                title="All-in (effective) vs naive unit cost"))
        outputs = flat.melt(id_vars="month", value_vars=["produced_outputs", "accepted_outputs"],
                            var_name="outputs", value_name="count")
        ui.plot(px.bar(outputs, x="month", y="count", color="outputs", barmode="group",
                               title="Produced vs accepted outputs"))
        table = ui.money_table(units, ["all_in_cost", *components])
        table["period"] = table["period"].map(ui.month)
        st.dataframe(table, hide_index=True)
