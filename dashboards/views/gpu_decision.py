"""GPU decision: today's cost vs the best eligible candidate, the gated candidate table, the memory fit
of the workload's candidates and the rent/reserve/buy break-even."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboards import ui
from reporting.formatting import fmt_money, fmt_unit_cost
from warehouse import serving

path = ui.serving_db()
st.title("GPU decision")
st.caption("Candidates are whole rentable instances or API routes, sized to production demand. Only candidates "
           "that pass every gate (memory margin, latency SLO, quality) are ranked, by cost per accepted output.")

workload = ui.pick("Workload", ui.load(serving.distinct, path, "fct_candidate_comparison", "workload_id"), "gd_workload",
                   all_option=False)
candidates = ui.guard(serving.workload_table, path, "fct_candidate_comparison", workload) if workload else None
if workload is None and ui.guard(serving.require, path, "fct_candidate_comparison") is not None:
    st.info("No candidates published yet.")


def _eligible(df: pd.DataFrame) -> pd.Series:
    """The SQL's eligibility (older publications: meets_slo); 'current' and missing-evidence rows never."""
    flag = df["eligible"] if "eligible" in df else df.get("meets_slo", pd.Series(False, index=df.index))
    ok = flag.astype("boolean").fillna(False).astype(bool)
    if "route_kind" in df:
        ok &= ~df["route_kind"].isin(["current", "missing_evidence"])
    return ok


gpu_rows = None
if candidates is not None and not candidates.empty:
    kinds = candidates["route_kind"] if "route_kind" in candidates else pd.Series("", index=candidates.index)
    today = candidates[kinds == "current"]
    eligible = candidates[_eligible(candidates)]
    best = eligible.sort_values("rank").iloc[0] if not eligible.empty else None
    currency = ((best.get("currency") if best is not None else None)
                or (today.iloc[0].get("currency") if not today.empty else None) or "")
    c1, c2, c3, c4 = st.columns(4)
    if not today.empty:
        c1.metric("Today (monthly)", fmt_money(today.iloc[0]["monthly_cost"], currency or None))
    if best is None:
        st.warning("No candidate passes every gate: nothing can be chosen for this workload. "
                   "Keep today's setup and collect the missing evidence below.")
    else:
        c2.metric("Best eligible candidate", str(best["candidate"]))
        if "monthly_savings" in best and pd.notna(best.get("monthly_savings")) and float(best["monthly_savings"]) < 0:
            st.warning("The best eligible candidate costs more than today: keep today's setup.")
        c3.metric("Effective unit cost", fmt_unit_cost(best["effective_unit_cost"], currency))
        if "monthly_savings" in best and pd.notna(best.get("monthly_savings")):
            c4.metric("Monthly savings vs today", fmt_money(best["monthly_savings"], currency or None),
                      delta=f"{float(best['savings_pct']):.1f} %" if pd.notna(best.get("savings_pct")) else None)
        else:
            c4.metric("Evidence", str(best.get("evidence") or best.get("basis") or "n/a"))
    missing = candidates[kinds == "missing_evidence"]
    for _, row in missing.iterrows():
        st.info(f"Evidence to collect next: {row['candidate']}")

    shown = ui.to_float(candidates)
    ranked = shown[_eligible(candidates).values]
    unranked = shown[~_eligible(candidates).values & ~kinds.isin(["current", "missing_evidence"]).values]
    first = ["rank", "candidate", "effective_unit_cost", "monthly_cost", "monthly_savings", "savings_pct",
             "evidence", "basis", "meets_slo"]
    order = [c for c in first if c in shown] + [c for c in shown.columns if c not in first and c != "workload_id"]
    config = {"effective_unit_cost": st.column_config.NumberColumn(format="%.6g"),
              "memory_margin_pct": st.column_config.NumberColumn(format="%.1f%%")}
    st.subheader("Ranked candidates (every gate passed)")
    if ranked.empty:
        st.caption("None.")
    else:
        st.dataframe(ranked.sort_values("rank"), hide_index=True, column_order=order, column_config=config)
    st.subheader("Not ranked: the gate each one failed")
    if unranked.empty:
        st.caption("None.")
    else:
        gate_first = ["candidate", "failed_gate", "memory_gate", "latency_gate", "quality_gate", "evidence",
                      "latency_evidence", "quality_evidence", "monthly_cost", "memory_margin_pct"]
        gate_order = [c for c in gate_first if c in unranked] + [c for c in order if c not in gate_first]
        st.dataframe(unranked, hide_index=True, column_order=gate_order, column_config=config)
    st.caption("Evidence: measured = a benchmark of this model on the same GPU, provider and count; same_gpu = "
               "another provider or count; projected = scaled by memory bandwidth from the workload's benchmark; "
               "analogue = a benchmark of another model; quality 'assumed' = production's acceptance carried over.")
    gpu_rows = candidates[kinds == "gpu"] if "route_kind" in candidates else candidates

if workload:
    st.subheader("Memory fit of this workload's candidates")
    fit = ui.guard(serving.workload_table, path, "fct_memory_fit", workload)
    if fit is not None and fit.empty:
        st.caption("No memory-fit rows for this workload (no model shape in the registry).")
    elif fit is not None:
        shown_fit = fit
        if gpu_rows is not None and {"gpu_model", "gpu_count"} <= set(fit.columns) and "instances" in gpu_rows:
            # The replica shapes the candidates use: GPUs per instance (x2 where multi-node is allowed).
            shapes = {(m, int(n)) for m, n, i in zip(gpu_rows["gpu_model"], gpu_rows["gpus_per_instance"],
                                                     gpu_rows["instances"]) if pd.notna(m) and pd.notna(n)}
            shapes |= {(m, 2 * n) for m, n in shapes}
            mask = [(m, int(n)) in shapes for m, n in zip(fit["gpu_model"], fit["gpu_count"])]
            if any(mask):
                shown_fit = fit[mask]
        if "is_production_concurrency" in shown_fit:
            shown_fit = shown_fit[shown_fit["is_production_concurrency"].fillna(False).astype(bool)]
        st.caption("required = weights + KV cache + activations/workspace + per-GPU runtime reserve; 'fits' only at a "
                   "margin at or above the registry threshold (default 15 %), 'tight' loads but is not eligible.")
        first_fit = ["gpu_model", "gpu_count", "fit_status", "margin_pct", "fit_note", "required_gb", "available_gb"]
        fit_order = [c for c in first_fit if c in shown_fit] + [c for c in shown_fit.columns
                                                                if c not in first_fit and c != "workload_id"]
        st.dataframe(ui.to_float(shown_fit), hide_index=True, column_order=fit_order)

    st.subheader("Rent, spot, reserve, buy or API: break-even utilisation")
    options = ui.guard(serving.workload_table, path, "fct_capacity_options", workload)
    if options is not None and options.empty:
        st.caption("No capacity options: the workload has no eligible GPU candidate to price.")
    if options is not None and not options.empty:
        flat = ui.to_float(options)
        fig = go.Figure(go.Bar(x=flat["option"], y=flat["break_even_utilisation"], name="break-even utilisation",
                               text=flat.get("label"), hovertext=flat.get("monthly_cost")))
        measured = flat["measured_utilisation"].dropna() if "measured_utilisation" in flat else pd.Series(dtype=float)
        needed = flat["needed_utilisation"].dropna() if "needed_utilisation" in flat else pd.Series(dtype=float)
        if not measured.empty:
            # One measured utilisation per workload: a horizontal line the options are compared against.
            fig.add_hline(y=float(measured.iloc[0]), line_dash="dash",
                          annotation_text=f"measured {float(measured.iloc[0]):.0%}")
        if not needed.empty:
            fig.add_hline(y=float(needed.iloc[0]), line_dash="dot", annotation_text=f"needed {float(needed.iloc[0]):.0%}")
        fig.update_layout(title="Utilisation above which each option beats on-demand", yaxis_tickformat=".0%")
        st.plotly_chart(fig)
        table = options.copy()
        for col in ("monthly_cost", "compute_cost", "scope_cost"):
            if col in table:
                table[col] = [fmt_money(v, None) for v in table[col]]
        st.table(table, hide_index=True)
        st.caption("Every option carries the same scope (storage, network, serving stack, labour; the API its "
                   "gateway). Spot is not a commitment; always-on endpoints are billed every hour.")
