"""How a spend forecast is charted; its statuses and words are reporting.forecast_status's (shared with reports)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from dashboards import ui
from reporting.forecast_status import MIN_DAYS, assess, forecast_text, interval_text  # noqa: F401 (the page's API)
from reporting.formatting import fmt_money


def chart(rows: pd.DataFrame, team: str, currency: str, basis_label: str) -> None:
    """One team's forecast months as points with their interval, and its monthly budget as a line."""
    shown = rows[rows["status"] != "not enough history"]
    if shown.empty:
        return
    months = shown["forecast_month"].map(ui.month).tolist()
    fc = [float(v) for v in shown["forecast"]]
    # An unmeasured interval draws no bar (not a zero-width one): the point alone.
    high = [float(h) - f if pd.notna(h) else 0.0 for h, f in zip(shown["forecast_high"], fc)]
    low = [f - float(lo) if lo is not None and pd.notna(lo) else 0.0 for lo, f in zip(shown["low_shown"], fc)]
    fig = go.Figure(go.Scatter(x=months, y=fc, mode="markers+lines", name="forecast",
                               error_y={"type": "data", "symmetric": False, "array": high, "arrayminus": low}))
    budget = shown["budget_monthly"].dropna()
    if not budget.empty:
        fig.add_hline(y=float(budget.iloc[0]), line_dash="dash", annotation_position="top left",
                      annotation_text=f"budget {fmt_money(budget.iloc[0], currency)}")
    fig.update_layout(title=f"{ui.plot_text(team)}: {basis_label} forecast with its interval ({currency})")
    ui.plot(fig, y_title=currency, money=True, height=320, margin_top=60)
