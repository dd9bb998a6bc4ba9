"""Anomalies & forecast: each spend anomaly against its series, expected band and root cause; the
chargeback and all-in showback forecasts with their interval and budget breach date."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboards import currency as money_view
from dashboards import filters, ui
from dashboards import forecasts as forecast_view
from reporting.formatting import fmt_money, labelled
from reporting.safe_text import md_text
from warehouse import serving_anomalies as readers

DIMENSIONS = {"team": "Team", "workload": "Workload", "provider": "Provider", "service": "Service",
              "gpu_model": "GPU model", "unit_cost": "Unit cost (per accepted output)"}
MAX_CHARTS = 12


@st.cache_data(ttl=3600, max_entries=256, show_spinner=False)
def _cached(name: str, stamp: tuple[int, int, int], path: Path, args: tuple[Any, ...]) -> pd.DataFrame:
    # Only this page's readers are dispatched to; the stamp changes with every publication (new file).
    return getattr(readers, name)(path, *args)


def load(fn: Callable[..., pd.DataFrame], path: Path, *args: Any) -> pd.DataFrame:
    """A serving_anomalies reader, cached per publication file (inode, mtime, size)."""
    try:
        info = Path(path).stat()
    except FileNotFoundError:
        return pd.DataFrame()
    return _cached(fn.__name__, (info.st_ino, info.st_mtime_ns, info.st_size), path, args)


def amount(value: Any, currency: str, dimension: str) -> str:
    """Money in cents; a unit cost in significant digits (a fraction of a cent is common)."""
    return ui.unit_cost(value, currency) if dimension == "unit_cost" else fmt_money(value, currency)


def series_chart(path: Path, anomaly: pd.Series) -> None:
    """The anomaly's series with its expected band, flagged days marked."""
    df = load(readers.series, path, anomaly["dimension"], anomaly["dimension_value"], anomaly["currency"])
    if df.empty:
        st.caption("Series not published (refresh to publish fct_anomaly_daily).")
        return
    flat = ui.to_float(df)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=flat["day"], y=flat["expected_high"], line={"width": 0}, showlegend=False,
                             hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=flat["day"], y=flat["expected_low"], line={"width": 0}, fill="tonexty",
                             fillcolor="rgba(99,110,250,0.18)", name="expected band"))
    fig.add_trace(go.Scatter(x=flat["day"], y=flat["expected"], line={"dash": "dot"}, name="expected (median)"))
    fig.add_trace(go.Scatter(x=flat["day"], y=flat["actual"], mode="lines+markers", name="actual"))
    flagged = flat[flat["is_anomaly"].astype(bool)]
    fig.add_trace(go.Scatter(x=flagged["day"], y=flagged["actual"], mode="markers", name="anomaly",
                             marker={"size": 13, "symbol": "x", "color": "crimson"}))
    label = DIMENSIONS.get(anomaly["dimension"], anomaly["dimension"])
    fig.update_layout(title=f"{label} {ui.plot_text(anomaly['dimension_value'])} ({anomaly['currency']}) per day")
    ui.plot(fig, y_title=anomaly["currency"], money=anomaly["dimension"] != "unit_cost", height=360)


path = ui.serving_db()
st.title("Anomalies & forecast")
st.caption("A day is an anomaly when its cost leaves the band of the previous 28 days' median ± 4 × 1.4826 × MAD "
           "and moves by at least the policy's minimum amount and percentage (registry policy anomaly_detection). "
           "Series with fewer than 7 days of history in their window say 'not enough history' instead of guessing.")

sel = filters.shared(path, "anomalies", use=("team", "currency"))
team, currency = sel.team, sel.currency
st.caption("Series and forecasts are computed in the reporting currency: each day's cost at that day's rate, each "
           "month at its month rate. Native currency lists only the series of days no rate could convert.")
money_view.rates_caption(path, money_view.REPORTING)
st.caption(f"Showing {('team ' + md_text(team) + ' (its own series and its workloads)') if team else 'every team'}"
           f"{', ' + currency if currency else ''}; provider, service and GPU-model series are company-wide and "
           "shown only without a team filter. Amounts are never added across currencies unconverted.")


def _in_currency(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["currency"] == currency] if currency and not df.empty and "currency" in df else df


anomalies = _in_currency(load(readers.anomalies, path, team))
coverage = _in_currency(load(readers.coverage, path, team))
if anomalies.empty and coverage.empty:
    st.info("Not published yet: fct_cost_anomalies. This page fills in once a refresh publishes it.")
else:
    dims = [d for d in DIMENSIONS if d in set(coverage.get("dimension", pd.Series(dtype=str)))]
    dimension = ui.pick("Dimension", dims, key="anomalies_dimension", fmt=lambda d: DIMENSIONS.get(d, d))
    shown_anomalies = anomalies if dimension is None or anomalies.empty else \
        anomalies[anomalies["dimension"] == dimension]
    shown_coverage = coverage if dimension is None else coverage[coverage["dimension"] == dimension]

    c1, c2, c3 = st.columns(3)
    c1.metric("Anomalies", len(shown_anomalies))
    c2.metric("Series watched", int((shown_coverage["status"] == "monitored").sum()) if not coverage.empty else 0)
    c3.metric("Not enough history", int((shown_coverage["status"] == "not enough history").sum())
              if not coverage.empty else 0)

    st.subheader("Anomalies")
    if shown_anomalies.empty:
        st.success("No anomaly: every monitored series stayed inside its expected band.")
    else:
        table = pd.DataFrame({
            "Day": shown_anomalies["day"].astype(str),
            "Dimension": shown_anomalies["dimension"].map(lambda d: DIMENSIONS.get(d, d)),
            "Series": shown_anomalies["dimension_value"],
            "Direction": shown_anomalies["direction"],
            "Actual": [amount(v, c, d) for v, c, d in zip(shown_anomalies["actual"], shown_anomalies["currency"],
                                                          shown_anomalies["dimension"])],
            "Expected (band)": [f"{amount(e, c, d)} ({amount(lo, c, d)} .. {amount(hi, c, d)})" for e, lo, hi, c, d in
                                zip(shown_anomalies["expected"], shown_anomalies["expected_low"],
                                    shown_anomalies["expected_high"], shown_anomalies["currency"],
                                    shown_anomalies["dimension"])],
            "Impact": [f"{amount(i, c, d)} ({p:+.0%})" if pd.notna(p) else amount(i, c, d) for i, p, c, d in
                       zip(shown_anomalies["impact_abs"], shown_anomalies["impact_pct"], shown_anomalies["currency"],
                           shown_anomalies["dimension"])],
            "Score": shown_anomalies["score"].map(lambda s: f"{s:.1f}"),
            "Root cause": shown_anomalies["root_cause"],
        })
        ui.table(table, "cost_anomalies", raw=shown_anomalies)
        for _, row in shown_anomalies.head(MAX_CHARTS).iterrows():
            # Labels and text here are Markdown: team and workload names in them are shown literally.
            with st.expander(f"{row['day']} · {md_text(DIMENSIONS.get(row['dimension'], row['dimension']))} "
                             f"{md_text(row['dimension_value'])} · {md_text(row['direction'])} · "
                             f"{md_text(row['root_cause'])}", expanded=len(shown_anomalies) <= 3):
                st.markdown(f"**Root cause** ({md_text(row['root_cause_dimension'] or 'none')}): "
                            f"{md_text(row['root_cause'])}")
                series_chart(path, row)
        if len(shown_anomalies) > MAX_CHARTS:
            st.caption(f"Charts for the newest {MAX_CHARTS} anomalies; every anomaly is in the table and its CSV.")

    short = shown_coverage[shown_coverage["status"] == "not enough history"] if not coverage.empty else coverage
    if not short.empty:
        st.subheader("Not enough history")
        st.caption("These series have no day with enough history in its window: no anomaly is guessed for them.")
        shown_short = short[["dimension", "dimension_value", "currency", "first_day", "last_day", "series_days"]]
        shown_short = shown_short.assign(dimension=shown_short["dimension"].map(lambda d: DIMENSIONS.get(d, d)))
        ui.table(labelled(shown_short.astype(str)), "anomaly_not_enough_history", raw=short)

st.subheader("Forecast: month-end and the next three months")
forecasts = _in_currency(load(readers.forecasts, path, team))
if forecasts.empty:
    st.info("Not published yet: fct_spend_forecast.")
else:
    if "basis" not in forecasts:
        forecasts = forecasts.assign(basis="chargeback")
    basis = ui.pick("Forecast basis", sorted(set(forecasts["basis"])), key="forecast_basis", all_option=False,
                    fmt=lambda b: {"chargeback": "Chargeback", "showback": "All-in showback"}.get(b, b))
    rows = forecast_view.assess(forecasts[forecasts["basis"] == basis])
    breaches = rows[rows["budget_breach_date"].notna() & (rows["status"] != "not enough history")]
    if not breaches.empty:
        st.warning("Budget forecast to be exceeded: " + "; ".join(
            f"{md_text(r.team_id)} {ui.month(r.forecast_month)} on {r.budget_breach_date} "
            f"({fmt_money(r.forecast, r.currency)} vs budget {fmt_money(r.budget_monthly, r.currency)})"
            for r in breaches.itertuples(index=False)))
    shown = pd.DataFrame({
        "Team": rows["team_id"], "Currency": rows["currency"], "Month": rows["forecast_month"].map(ui.month),
        "Horizon": rows["horizon"], "Method": rows["method"],
        "Forecast": [forecast_view.forecast_text(r) for r in rows.itertuples(index=False)],
        "Interval": [forecast_view.interval_text(r) for r in rows.itertuples(index=False)],
        "Budget": [fmt_money(b, c) if pd.notna(b) else "no budget" for b, c in zip(rows["budget_monthly"],
                                                                                   rows["currency"])],
        "Budget breach date": rows["budget_breach_date"].map(lambda d: str(d) if pd.notna(d) else ""),
    })
    ui.table(shown, f"spend_forecast_{basis}", raw=rows.drop(columns=["low_shown"]))
    label = {"chargeback": "chargeback", "showback": "all-in showback"}.get(basis, basis)
    series = list(rows.groupby(["team_id", "currency"], sort=True))
    for (team_id, cur_id), one in series[:MAX_CHARTS]:
        forecast_view.chart(one, team_id, cur_id, label)
    if len(series) > MAX_CHARTS:
        st.caption(f"Charts for the first {MAX_CHARTS} teams; choose a team in the sidebar for its own chart.")
    st.caption("Run-rate while the latest month is open (cost so far ÷ days observed × days of the month); the "
               "mean of the last complete months once it is complete. Interval: ± the spread of past monthly "
               "totals, or of the month's daily cost when there is less history, never below zero; 'unmeasured' when "
               f"that spread is not measured. Fewer than {forecast_view.MIN_DAYS} observed days: not enough history, "
               "no forecast. Breach date: the first day the month's cost exceeds the budget at an even daily rate.")
