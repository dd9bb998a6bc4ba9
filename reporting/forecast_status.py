"""How a spend forecast is described in words, on screens and in reports: 'not enough history' under a stated
minimum of observed days, an interval that is never narrower than the series' noise can be known to be (a
zero-width interval around a month still to come says the noise was not measured, not that it is nil), and
never below zero. The model (fct_spend_forecast.forecast_status) decides; a publication from before it had the
column is judged here the same way."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pandas as pd

from reporting.formatting import fmt_money

MIN_DAYS = 7  # fewer observed days than a week: a run-rate is a guess, not a forecast


def assess(rows: pd.DataFrame) -> pd.DataFrame:
    """The forecast rows with `history_days` (days observed in the basis month of the series), `status`
    ('forecast', 'not enough history', 'interval unmeasured', 'actual': the model's forecast_status when
    published) and `low_shown` (the lower bound, never below zero)."""
    if rows.empty:
        return rows.assign(history_days=[], status=[], low_shown=[])
    keys = ["basis", "team_id", "currency"] if "basis" in rows else ["team_id", "currency"]
    observed = rows[rows["horizon"] == 0].set_index(keys)["days_observed"]
    history = [int(observed.get(tuple(k), 0) or 0) for k in rows[keys].itertuples(index=False)]
    if "forecast_status" in rows:
        statuses = rows["forecast_status"].tolist()
    else:
        statuses = [_status(r, days) for (_, r), days in zip(rows.iterrows(), history)]
    low = [max(Decimal(v), Decimal(0)) if v is not None and pd.notna(v) else None for v in rows["forecast_low"]]
    return rows.assign(history_days=history, status=statuses, low_shown=low)


def _status(r: pd.Series, days: int) -> str:
    """The model's forecast_status rule, for a publication without the column."""
    if r["method"] == "actual":
        return "actual"
    if r["method"] == "run-rate" and days < MIN_DAYS:
        return "not enough history"
    if pd.isna(r["forecast_low"]) or (r["forecast_low"] == r["forecast_high"] and r["forecast"] != 0):
        return "interval unmeasured"
    return "forecast"


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
    if r.status == "interval unmeasured":
        return "unmeasured: no monthly or daily spread of this series yet"
    return f"{fmt_money(r.low_shown, r.currency)} .. {fmt_money(r.forecast_high, r.currency)}"
