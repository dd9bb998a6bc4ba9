"""GPU decision: today's cost vs the best eligible candidate, the gated candidate table (eligible rows first,
the others with the reason each is out), the memory fit of the workload and the rent/reserve/buy break-even."""

from __future__ import annotations

from decimal import Decimal
from urllib.parse import urlencode

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboards import currency as money_view
from dashboards import filters, gates, ui
from reporting.formatting import fmt_money
from reporting.safe_text import md_text
from warehouse import serving, serving_decisions

path = ui.serving_db()
st.title("GPU decision")
st.caption("Every workload at equal demand: today's cost, the best route that passes every gate (memory margin, "
           "latency SLO, quality) and costs less, or the cheapest route still pending evidence with the benchmark "
           "that settles it. Click a workload (or choose it below the table or in the sidebar) for its candidates and gates.")

# A workload's link in the table (?workload=<id>) opens it: it becomes the shared Workload filter.
if "workload" in st.query_params:
    st.session_state[filters.store("workload")] = st.query_params["workload"]
    del st.query_params["workload"]
sel = filters.shared(path, "candidates", use=("team", "workload", "currency"))
st.caption("Decisions are priced in USD: every offer converted at the rate of its observation day, today's cost "
           "at its month's rate (the current row's notes name them).")
money_view.rates_caption(path, money_view.REPORTING)
workload, cur = sel.workload, sel.currency or ""
summary = ui.guard(serving_decisions.decision_summary, path, team=sel.team, currency=sel.currency)
if summary is not None and not summary.empty:
    switch = summary[summary["choice"] == "switch"]
    c1, c2, c3 = st.columns(3)
    c1.metric("Workloads compared", f"{len(summary):,}")
    c2.metric("With a cheaper route passing every gate", f"{len(switch):,}")
    c3.metric(f"Saving per month if each switches ({cur})", fmt_money(sum(switch["monthly_savings"], Decimal(0)), cur))
    CHOICE = {"switch": "switch", "pending evidence": "pending evidence", "keep today": "keep today's setup"}
    table = pd.DataFrame({
        "Workload": summary["workload_id"], "Team": summary["team_id"].fillna(""),
        f"Today per month ({cur})": [fmt_money(v, None) for v in summary["today_monthly_cost"]],
        "Best option at equal demand": [f"{CHOICE.get(c, c)}: {b}" if isinstance(b, str) else CHOICE.get(c, c)
                                        for c, b in zip(summary["choice"], summary["best_candidate"])],
        f"Saving per month ({cur})": [fmt_money(v, None) for v in summary["monthly_savings"]],
        "Saving per output": [f"{ui.unit_cost(v, cur)} per {u}" if pd.notna(v) else "n/a"
                              for v, u in zip(summary["saving_per_output"], summary["unit_of_success"])],
        "Evidence grade": summary["evidence"].fillna("none"),
        "Next benchmark": summary["next_benchmark"].fillna("none needed"),
    })
    ui.table(table, "decision_summary", raw=summary,
             links={"Workload": ["?" + urlencode({"workload": w}) for w in summary["workload_id"]]})

    def _open() -> None:
        """The workload picked here becomes the shared Workload filter (kept on every page)."""
        st.session_state[filters.store("workload")] = st.session_state["gd_open"] or ui.ALL

    ids = summary["workload_id"].tolist()
    st.session_state["gd_open"] = workload if workload in ids else None
    st.selectbox("Open one workload's candidates and gates", ids, key="gd_open", index=None, on_change=_open,
                 placeholder="Choose a workload")
    st.caption("Saving per output = saving per month / the accepted outputs of the month every route is sized to. "
               "Evidence grade: measured > same_gpu > projected > analogue > missing.")
candidates = ui.guard(serving.workload_table, path, "fct_candidate_comparison", workload) if workload else None
if candidates is not None and sel.currency and "currency" in candidates:
    candidates = candidates[candidates["currency"].isna() | (candidates["currency"] == sel.currency)]
if workload is not None:
    st.header(f"{md_text(workload)}: candidates and gates")


def _eligible(df: pd.DataFrame) -> pd.Series:
    """The SQL's eligibility (older publications: meets_slo); 'current' and missing-evidence rows never."""
    flag = df["eligible"] if "eligible" in df else df.get("meets_slo", pd.Series(False, index=df.index))
    ok = flag.astype("boolean").fillna(False).astype(bool)
    if "route_kind" in df:
        ok &= ~df["route_kind"].isin(["current", "missing_evidence"])
    return ok


def _col(df: pd.DataFrame, name: str) -> pd.Series:
    return df[name] if name in df else pd.Series(None, index=df.index, dtype=object)


def _pct(v: object) -> str:
    return f"{float(v):.1f} %" if v is not None and pd.notna(v) else "n/a"


gpu_rows = None
if candidates is not None and not candidates.empty:
    kinds = _col(candidates, "route_kind").fillna("")
    today = candidates[kinds == "current"]
    ok = _eligible(candidates)
    eligible = candidates[ok].sort_values("rank")
    best = eligible.iloc[0] if not eligible.empty else None
    t = today.iloc[0] if not today.empty else None
    unit = "accepted output"
    with st.container(border=True):
        c1, c2, c3, c4 = st.columns(4)
        if t is not None:
            c1.metric(f"Today, per month ({cur})", fmt_money(t["monthly_cost"], cur))
            c2.metric(f"Today, per {unit}", ui.unit_cost(t.get("effective_unit_cost"), cur))
        if best is None:
            st.warning("No candidate passes every gate: nothing can be chosen for this workload. "
                       "Keep today's setup and collect the missing evidence below.")
        else:
            c3.metric(f"Best eligible, per month ({cur})", fmt_money(best["monthly_cost"], cur))
            saving = best.get("monthly_savings")
            c4.metric(f"Saving per month ({cur})", fmt_money(saving, cur) if pd.notna(saving) else "n/a",
                      delta=_pct(best.get("savings_pct")) if pd.notna(best.get("savings_pct")) else None)
            # Candidate names and evidence labels come from registries and benchmark files: shown literally.
            st.markdown(f"**Recommended route:** {md_text(best['candidate'])} · "
                        f"{md_text(ui.unit_cost(best['effective_unit_cost'], cur))} per {unit} · evidence: "
                        f"{md_text(best.get('evidence') or 'n/a')}  \nGates (measured vs target): memory "
                        f"{md_text(gates.memory(best))} · latency {md_text(gates.latency(best))} · quality "
                        f"{md_text(gates.quality(best))}")
            if pd.notna(saving) and float(saving) < 0:
                st.warning("The best eligible candidate costs more than today: keep today's setup.")
    for _, row in candidates[kinds == "missing_evidence"].iterrows():
        st.info(f"Evidence to collect next: {md_text(row['candidate'])}")

    out = candidates[~ok & ~kinds.isin(["current", "missing_evidence"])]
    st.subheader(f"Eligible candidates, cheapest per {unit} first ({cur})")
    if eligible.empty:
        st.caption("None: every candidate fails at least one gate (see below).")
    else:
        table = pd.DataFrame({
            "Rank": eligible["rank"], "Candidate": eligible["candidate"], "Evidence": _col(eligible, "evidence"),
            f"Per {unit} ({cur})": [ui.unit_cost(v, None) for v in eligible["effective_unit_cost"]],
            f"Per month ({cur})": [fmt_money(v, None) for v in eligible["monthly_cost"]],
            f"Saving per month ({cur})": [fmt_money(v, None) for v in _col(eligible, "monthly_savings")],
            "Saving": [_pct(v) for v in _col(eligible, "savings_pct")],
            **gates.columns(eligible),
        })
        ui.table(table, f"candidates_eligible_{workload}", raw=eligible)
    if not out.empty and st.toggle(f"Show the {len(out)} candidates that are out, with the reason each is out",
                                   key="gd_show_out"):
        out = out.sort_values("effective_unit_cost", na_position="last")
        table = pd.DataFrame({
            "Candidate": out["candidate"], "Why it is out": _col(out, "failed_gate").fillna("not ranked"),
            f"Per {unit} ({cur})": [ui.unit_cost(v, None) for v in out["effective_unit_cost"]],
            f"Per month ({cur})": [fmt_money(v, None) for v in out["monthly_cost"]],
            "Evidence": _col(out, "evidence"), **gates.columns(out),
        })
        ui.table(table, f"candidates_out_{workload}", raw=out, printed_max=200)
    st.caption("Evidence: measured = a benchmark of this model on the same GPU, provider and count; same_gpu = "
               "another provider or count; projected = scaled by memory bandwidth from the workload's benchmark; "
               "analogue = a benchmark of another model; quality 'assumed' = production's acceptance carried over.")
    gpu_rows = candidates[kinds == "gpu"] if "route_kind" in candidates else candidates

if workload:
    st.subheader("Memory fit")
    fit = ui.guard(serving.workload_table, path, "fct_memory_fit", workload)
    if fit is not None and fit.empty:
        st.caption("No memory-fit rows for this workload (no model shape in the registry).")
    elif fit is not None:
        if "is_production_concurrency" in fit:
            fit = fit[fit["is_production_concurrency"].fillna(False).astype(bool)]
        fit = fit.sort_values(["gpu_model", "gpu_count"])
        fits = fit["fit_status"] == "fits"
        # Per GPU model: every configuration that fits, plus the largest that does not (the step below the
        # smallest fit), so the analyst sees where the line is without 100 rows of 'does not fit'.
        keep = fits.copy()
        for model, rows in fit.groupby("gpu_model"):
            smallest_fit = rows.loc[rows["fit_status"] == "fits", "gpu_count"].min()
            below = rows[(rows["fit_status"] != "fits")
                         & ((rows["gpu_count"] < smallest_fit) if pd.notna(smallest_fit) else False)]
            if not below.empty:
                keep.loc[below.index[-1]] = True
        never = sorted(set(fit["gpu_model"]) - set(fit.loc[fits, "gpu_model"]))
        show_all = st.toggle(f"Show all {len(fit)} configurations tested", key="gd_fit_all")
        shown = fit if show_all else fit[keep]
        st.caption(f"{int(fits.sum())} configurations fit at production concurrency; the largest configuration that "
                   "does not fit is shown under each GPU model's smallest fit. required = weights + KV cache + "
                   "activations/workspace + per-GPU runtime reserve; 'fits' needs a margin at or above the registry "
                   "threshold (default 15 %); 'tight' loads but is not eligible."
                   + (f" Fits in no configuration tested: {', '.join(never)}." if never and not show_all else ""))
        table = pd.DataFrame({
            "GPU model": shown["gpu_model"], "GPUs": shown["gpu_count"], "Fit": shown["fit_status"],
            "Margin": [_pct(v) for v in shown["margin_pct"]],
            "Required (GB)": [f"{float(v):,.1f}" for v in shown["required_gb"]],
            "Available (GB)": [f"{float(v):,.1f}" for v in shown["available_gb"]],
            "Note": _col(shown, "fit_note").fillna(""),
        })
        ui.table(table, f"memory_fit_{workload}", raw=shown, printed_max=80)

    st.subheader("Rent, spot, reserve, buy or API: break-even utilisation")
    options = ui.guard(serving.workload_table, path, "fct_capacity_options", workload)
    if options is not None and options.empty:
        st.caption("No capacity options: the workload has no eligible GPU candidate to price.")
    if options is not None and not options.empty:
        st.caption(f"For the best eligible GPU candidate: {md_text(options['candidate'].iloc[0])}.")
        flat = ui.to_float(options)
        has = flat[flat["break_even_utilisation"].notna()]
        if not has.empty:
            fig = go.Figure(go.Bar(x=has["option"], y=has["break_even_utilisation"], name="break-even utilisation",
                                   text=[f"{v:.0%}" for v in has["break_even_utilisation"]], textposition="outside",
                                   cliponaxis=False, hovertemplate="%{x}: beats on-demand above %{y:.0%}<extra></extra>"))
            for col, dash, name in (("measured_utilisation", "dash", "measured"), ("needed_utilisation", "dot", "needed")):
                values = flat[col].dropna() if col in flat else pd.Series(dtype=float)
                if not values.empty:
                    # One utilisation per workload: a line the options are compared against.
                    fig.add_hline(y=float(values.iloc[0]), line_dash=dash, annotation_position="top left",
                                  annotation_text=f"{name} {float(values.iloc[0]):.0%}")
            fig.update_layout(title="Utilisation above which each commitment beats on-demand")
            fig.update_yaxes(range=[0, 1.15])
            ui.plot(fig, share=True, y_title="Break-even utilisation", x_title="Option")
        missing = flat[flat["break_even_utilisation"].isna()]
        if not missing.empty:
            st.caption("No break-even: " + "; ".join(f"{md_text(o)} ({md_text(n)})" for o, n in zip(
                missing["option"], _col(missing, "basis_note").fillna(_col(missing, "capex_status")))) + ".")
        table = pd.DataFrame({
            "Option": options["option"],
            f"Per month ({cur})": [fmt_money(v, None) for v in options["monthly_cost"]],
            f"Compute ({cur})": [fmt_money(v, None) for v in _col(options, "compute_cost")],
            f"Scope ({cur})": [fmt_money(v, None) for v in _col(options, "scope_cost")],
            "Break-even utilisation": [f"{float(v):.0%}" if pd.notna(v) else "none"
                                       for v in options["break_even_utilisation"]],
            "Basis": _col(options, "basis_note").fillna(""),
        })
        ui.table(table, f"capacity_options_{workload}", raw=options)
        st.caption("Every option carries the same scope (storage, network, serving stack, labour; the API its "
                   "gateway). Spot is not a commitment; always-on endpoints are billed every hour.")
