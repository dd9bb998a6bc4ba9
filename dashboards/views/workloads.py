"""Workloads: unit cost per accepted output with its cost components; produced vs accepted outputs."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import streamlit as st

from dashboards import currency as money_view
from dashboards import filters, ui
from reporting.formatting import fmt_money, value_label
from reporting.safe_text import md_text
from warehouse import serving

COMPONENT_LABELS = {c: value_label(c) for c in (*serving.UNIT_COST_COMPONENTS, "api_usage")}  # the one dictionary

path = ui.serving_db()
st.title("Workloads")
st.caption("Effective (all-in) unit cost = every cost of the workload over its accepted outputs; naive = GPU cost "
           "over produced outputs. Basis 'benchmark' rows price a benchmark run, not production.")

sel = filters.shared(path, "unit_cost")
units = ui.guard(serving.unit_costs, path, team=sel.team, workload=sel.workload, start=sel.month, end=sel.month)
money_view.rates_caption(path, money_view.REPORTING if sel.converted else money_view.NATIVE)
if sel.converted:
    # Each currency's row divides its cost by all the workload's outputs: converted, they add up to one row.
    amounts = ["all_in_cost", "effective_unit_cost", "naive_unit_cost", "waste_cost",
               *serving.UNIT_COST_COMPONENTS, "api_usage"]
    units = money_view.combine(money_view.convert(units, path, amounts), ["workload_id", "period", "basis"], amounts)
    if units is not None and not units.empty and "waste_share" in units:
        units["waste_share"] = [float(w) / float(a) if a else None for w, a in zip(units["waste_cost"], units["all_in_cost"])]
    money_view.not_converted(units, sel.currency)
if units is not None and sel.currency is not None:
    units = units[units["currency"] == sel.currency]  # never add or draw two currencies together
cur = sel.currency or ""


def _summary(df: pd.DataFrame) -> pd.DataFrame:
    """One printed row per workload, month and basis: the figures an analyst compares."""
    out = pd.DataFrame({
        "Workload": df["workload_id"], "Team": df["team_id"], "Month": df["period"].map(ui.month),
        "Basis": df.get("basis", pd.Series("production", index=df.index)),
        "Unit of success": df["unit_of_success"],
        f"All-in cost ({cur})": [fmt_money(v, cur) for v in df["all_in_cost"]],
        "Accepted / produced": [f"{int(a or 0):,} / {int(p or 0):,}"
                                for a, p in zip(df["accepted_outputs"], df["produced_outputs"])],
        f"Effective cost per accepted output ({cur})": [ui.unit_cost(v, cur) for v in df["effective_unit_cost"]],
        f"Naive cost per produced output ({cur})": [ui.unit_cost(v, cur) for v in df["naive_unit_cost"]],
        "All-in / naive": [f"{float(e / n):.2f}x" if n else "n/a"
                           for e, n in zip(df["effective_unit_cost"], df["naive_unit_cost"])],
    })
    return out


if units is not None and units.empty:
    st.info("No unit costs for this selection.")
elif units is not None and sel.workload is None:
    st.subheader(f"Unit cost per workload ({cur})")
    st.caption("Choose a workload in the sidebar for its cost components and outputs.")
    ui.table(_summary(units), "unit_costs", raw=units)
elif units is not None:
    production = units[units["basis"] == "production"] if "basis" in units else units
    row = (production if not production.empty else units).sort_values("period").iloc[-1]
    unit = row.get("unit_of_success") or "accepted output"
    c1, c2, c3, c4 = st.columns(4)
    c1.metric(f"All-in cost {ui.month(row['period'])} ({cur})", fmt_money(row["all_in_cost"], cur))
    c2.metric(f"Effective cost per {md_text(unit)}", ui.unit_cost(row["effective_unit_cost"], cur))
    c3.metric("Naive cost per produced output", ui.unit_cost(row["naive_unit_cost"], cur))
    c4.metric("Accepted / produced outputs",
              f"{int(row['accepted_outputs'] or 0):,} / {int(row['produced_outputs'] or 0):,}")
    if row.get("unit_cost_note"):
        st.caption(md_text(row["unit_cost_note"]))  # registry text: shown literally

    shown = production if not production.empty else units
    components = [c for c in serving.UNIT_COST_COMPONENTS if c in shown.columns and shown[c].fillna(0).any()]
    flat = ui.to_float(shown)
    flat["month"] = flat["period"].map(ui.month)
    # Components per accepted output, so the stack adds up to the effective unit cost.
    per_unit = flat[["month", *components]].copy()
    for c in components:
        per_unit[c] = flat[c] / flat["accepted_outputs"].where(flat["accepted_outputs"] > 0)
    long = per_unit.melt(id_vars="month", var_name="component", value_name="cost")
    long["component"] = long["component"].map(COMPONENT_LABELS)
    ui.plot(px.bar(long, x="month", y="cost", color="component",
                   title=f"Cost per {ui.plot_text(unit)} by component ({cur})",
                   labels={"cost": f"{cur} per {unit}", "month": "Month", "component": "Component"}),
            money=True)
    lines = flat.melt(id_vars="month", value_vars=["effective_unit_cost", "naive_unit_cost"], var_name="measure",
                      value_name="cost")
    lines["measure"] = lines["measure"].map({"effective_unit_cost": f"All-in, per {unit}",
                                             "naive_unit_cost": "Naive, per produced output"})
    ui.plot(px.bar(lines, x="month", y="cost", color="measure", barmode="group",
                   title=f"All-in (effective) vs naive unit cost ({cur})",
                   labels={"cost": f"{cur} per output", "month": "Month"}), money=True)
    outputs = flat.melt(id_vars="month", value_vars=["produced_outputs", "accepted_outputs"],
                        var_name="outputs", value_name="count")
    outputs["outputs"] = outputs["outputs"].map({"produced_outputs": "Produced", "accepted_outputs": "Accepted"})
    ui.plot(px.bar(outputs, x="month", y="count", color="outputs", barmode="group",
                   title="Produced vs accepted outputs", labels={"count": "outputs", "month": "Month"}), money=True)
    st.subheader(f"Unit cost rows ({cur})")
    ui.table(_summary(units), "unit_costs", raw=units)
    parts = ui.money_table(units, ["all_in_cost", *components])
    parts = pd.DataFrame({"Month": units["period"].map(ui.month), "Basis": units.get("basis"),
                          **{f"{COMPONENT_LABELS[c]} ({cur})": parts[c] for c in components},
                          f"All-in cost ({cur})": parts["all_in_cost"]})
    st.subheader(f"Cost components ({cur})")
    ui.table(parts, "unit_cost_components", raw=units[["workload_id", "period", "currency", *components,
                                                       "all_in_cost"]])
