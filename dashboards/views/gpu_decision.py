"""GPU decision: the candidate table for one workload, its memory fit and the rent/reserve break-even."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from dashboards import ui
from reporting.formatting import fmt_money, fmt_unit_cost
from warehouse import serving

path = ui.serving_db()
st.title("GPU decision")
st.caption("Candidates are ranked by cost per accepted output; only candidates that meet the SLO can be chosen.")

workload = ui.pick("Workload", ui.load(serving.distinct, path, "fct_candidate_comparison", "workload_id"), "gd_workload",
                   all_option=False)
candidates = ui.guard(serving.workload_table, path, "fct_candidate_comparison", workload) if workload else None
if workload is None and ui.guard(serving.require, path, "fct_candidate_comparison") is not None:
    st.info("No candidates published yet.")

if candidates is not None and not candidates.empty:
    eligible = candidates[candidates["meets_slo"].fillna(False).astype(bool)]
    if eligible.empty:
        st.warning("No candidate meets the SLO: nothing can be chosen for this workload.")
    else:
        best = eligible.sort_values("rank").iloc[0]
        currency = best.get("currency") or ""
        c1, c2, c3 = st.columns(3)
        c1.metric("Chosen candidate", str(best["candidate"]))
        c2.metric("Effective unit cost", fmt_unit_cost(best["effective_unit_cost"], currency))
        c3.metric("Basis", str(best.get("basis") or "n/a"))
    shown = ui.to_float(candidates)
    # The decision columns first; the inputs they were computed from follow.
    first = ["rank", "candidate", "meets_slo", "effective_unit_cost", "basis"]
    order = [c for c in first if c in shown] + [c for c in shown.columns if c not in first and c != "workload_id"]
    st.dataframe(shown, hide_index=True, column_order=order, column_config={
        "effective_unit_cost": st.column_config.NumberColumn(format="%.6g"),
        "memory_margin_pct": st.column_config.NumberColumn(format="%.1f%%"),
    })

if workload:
    st.subheader("Memory fit")
    fit = ui.guard(serving.workload_table, path, "fct_memory_fit", workload)
    if fit is not None and fit.empty:
        st.caption("No memory-fit rows for this workload.")
    elif fit is not None:
        st.dataframe(ui.to_float(fit), hide_index=True)

    st.subheader("Rent, reserve or API: break-even utilisation")
    options = ui.guard(serving.workload_table, path, "fct_capacity_options", workload)
    if options is not None and not options.empty:
        flat = ui.to_float(options)
        fig = go.Figure(go.Bar(x=flat["option"], y=flat["break_even_utilisation"], name="break-even utilisation",
                               text=flat.get("label"), hovertext=flat.get("monthly_cost")))
        measured = flat["measured_utilisation"].dropna()
        if not measured.empty:
            # One measured utilisation per workload: a horizontal line the options are compared against.
            fig.add_hline(y=float(measured.iloc[0]), line_dash="dash",
                          annotation_text=f"measured {float(measured.iloc[0]):.0%}")
        fig.update_layout(title="Utilisation above which each option beats on-demand", yaxis_tickformat=".0%")
        st.plotly_chart(fig)
        table = options.copy()
        if "monthly_cost" in table:
            table["monthly_cost"] = [fmt_money(v, None) for v in table["monthly_cost"]]
        st.table(table, hide_index=True)
