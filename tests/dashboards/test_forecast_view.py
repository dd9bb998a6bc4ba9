"""How forecasts are shown: not enough history under the stated minimum, an unknown interval instead of a
zero-width one, never a lower bound below zero."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pandas as pd

from dashboards import forecasts

D = Decimal


def _rows() -> pd.DataFrame:
    # basis, team, currency, horizon, month, method, days observed, forecast, low, high, budget, breach
    data = [
        ("chargeback", "a", "CAD", 0, date(2023, 9, 1), "run-rate", 2, D("18.92"), D("18.92"), D("18.92"), None, None),
        ("chargeback", "a", "CAD", 1, date(2023, 10, 1), "run-rate", 0, D("19.55"), D("19.55"), D("19.55"), None, None),
        ("chargeback", "b", "USD", 0, date(2025, 4, 1), "run-rate", 15, D("100"), D("-20"), D("220"), D("500"), None),
        ("showback", "c", "USD", 1, date(2025, 5, 1), "run-rate", 0, D("3975.11"), D("3975.11"), D("3975.11"), None,
         None),
        ("showback", "c", "USD", 0, date(2025, 4, 1), "run-rate", 15, D("3846.88"), D("3800"), D("3900"), None, None),
    ]
    return pd.DataFrame(data, columns=["basis", "team_id", "currency", "horizon", "forecast_month", "method",
                                       "days_observed", "forecast", "forecast_low", "forecast_high", "budget_monthly",
                                       "budget_breach_date"])


def test_statuses_and_texts() -> None:
    rows = forecasts.assess(_rows())
    # a/CAD: 2 days observed < 7, both horizons; b: 100 - 120 = -20 shown as 0; c month 1 zero-width with 15 days.
    assert rows["status"].tolist() == ["not enough history", "not enough history", "forecast", "interval unmeasured",
                                       "forecast"]
    texts = [(forecasts.forecast_text(r), forecasts.interval_text(r)) for r in rows.itertuples(index=False)]
    assert texts[0] == ("not enough history (2 days observed; at least 7 needed)", "none")
    assert texts[2] == ("USD 100.00", "USD 0.00 .. USD 220.00")
    assert texts[3] == ("USD 3,975.11", "unmeasured: no monthly or daily spread of this series yet")


def test_the_model_status_wins_when_published() -> None:
    # A publication with fct_spend_forecast.forecast_status: the model's word is shown, NULL bounds stay NULL.
    rows = _rows().assign(forecast_status=["not enough history", "not enough history", "forecast",
                                           "interval unmeasured", "forecast"])
    rows.loc[3, ["forecast_low", "forecast_high"]] = None
    shown = forecasts.assess(rows)
    assert shown["status"].tolist() == rows["forecast_status"].tolist()
    assert shown["low_shown"][3] is None
    r = next(shown.iloc[[3]].itertuples(index=False))
    assert forecasts.interval_text(r) == "unmeasured: no monthly or daily spread of this series yet"
