"""How a spend forecast is shown: 'not enough history' under a stated minimum of observed days, an interval
that is never narrower than the series' noise can be known to be (a zero-width interval around a month still to
come says the noise was not measured, not that it is nil), and never below zero."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from dashboards import ui
from reporting.formatting import fmt_money

MIN_DAYS = 7  # fewer observed days than a week: a run-rate is a guess, not a forecast


def assess(rows: pd.DataFrame) -> pd.DataFrame:
    """The forecast rows with `history_days` (days observed in the basis month of the series), `status`
    ('forecast', 'not enough history', 'interval unknown', 'actual') and `low_shown` (the lower bound, never
    below zero)."""
    if rows.empty:
        return rows.assign(history_days=[], status=[], low_shown=[])
    keys = ["basis", "team_id", "currency"] if "basis" in rows else ["team_id", "currency"]
    observed = rows[rows["horizon"] == 0].set_index(keys)["days_observed"]
    history = [int(observed.get(tuple(k), 0) or 0) for k in rows[keys].itertuples(index=False)]
    statuses = []
    for (_, r), days in zip(rows.iterrows(), history):
        if r["method"] == "actual":
            statuses.append("actual")
        elif r["method"] == "run-rate" and days < MIN_DAYS:
            statuses.append("not enough history")
        elif r["forecast_low"] == r["forecast_high"] and r["forecast"] != 0:
            statuses.append("interval unknown")
        else:
            statuses.append("forecast")
    low = [max(Decimal(v), Decimal(0)) if v is not None and pd.notna(v) else None for v in rows["forecast_low"]]
    return rows.assign(history_days=history, status=statuses, low_shown=low)


def forecast_text(r: Any) -> str:
    """The forecast cell: the amount, or why there is none."""
    if r.status == "not enough history":
        return f"not enough history ({r.history_days} days observed; at least {MIN_DAYS} needed)"
    return fmt_money(r.forecast, r.currency)


def interval_text(r: Any) -> str:
    """The interval cell: 'low .. high', or why there is none."""
    if r.status == "not enough history":
        return "none"
    if r.status == "actual":
        return "actual (month complete)"
    if r.status == "interval unknown":
        return "unknown: the series' daily noise is not measured"
    return f"{fmt_money(r.low_shown, r.currency)} .. {fmt_money(r.forecast_high, r.currency)}"


def chart(rows: pd.DataFrame, team: str, currency: str, basis_label: str) -> None:
    """One team's forecast months as points with their interval, and its monthly budget as a line."""
    shown = rows[rows["status"] != "not enough history"]
    if shown.empty:
        return
    months = shown["forecast_month"].map(ui.month).tolist()
    fc = [float(v) for v in shown["forecast"]]
    high = [float(h) - f for h, f in zip(shown["forecast_high"], fc)]
    low = [f - float(lo) if lo is not None else 0.0 for lo, f in zip(shown["low_shown"], fc)]
    fig = go.Figure(go.Scatter(x=months, y=fc, mode="markers+lines", name="forecast",
                               error_y={"type": "data", "symmetric": False, "array": high, "arrayminus": low}))
    budget = shown["budget_monthly"].dropna()
    if not budget.empty:
        fig.add_hline(y=float(budget.iloc[0]), line_dash="dash", annotation_position="top left",
                      annotation_text=f"budget {fmt_money(budget.iloc[0], currency)}")
    fig.update_layout(title=f"{ui.plot_text(team)}: {basis_label} forecast with its interval ({currency})")
    ui.plot(fig, y_title=currency, money=True, height=320, margin_top=60)
