"""Spend anomalies with a root cause and chargeback forecasts, by hand.

One refresh of tests/fixtures/anomalies/spike_2025-04/ (registry: teams alpha 3000 USD, beta
10000 EUR, gamma 1000 EUR; policy anomaly_detection {min_history_days 7, window_days 28,
min_abs_impact 10, min_pct 0.5, k 4}; mad_floor_pct takes its default 0.05). FOCUS 1.2, April 2025,
one line per resource and day (ChargePeriodStart..+1 day):

alpha USD  m7i.48xlarge on i-alpha-base   100/day  2025-04-01..21     (workload alpha-batch)
           r7i.48xlarge on i-alpha-burst  500      2025-04-21 only    -> day 21 = 600
beta  EUR  D96as_v5 on vm-beta-1          200/day  2025-04-01..21     (steady; workload beta-chat)
gamma EUR  D16as_v5 on vm-gamma-1          50/day  2025-04-19..21     (3 days: not enough history)
beta-chat accepted outputs (quality export): 1000/day 2025-04-01..20, 400 on 2025-04-21.
alpha-batch assumes storage 300 USD/month (registry estimate: all-in showback only).

Anomaly on 2025-04-21, team alpha (and the USD provider/service/workload series, which are alpha's):
  history = days 1..20 (20 days >= 7), all 100 -> expected = median = 100, MAD = 0
  scaled_mad = max(1.4826 x 0, 0.05 x 100, 0.01) = 5
  score = (600 - 100) / 5 = 100 >= 4; band 100 +- 4 x 5 = [80, 120]
  impact = 500 >= 10; impact_pct = 500 / 100 = 5.0 >= 0.5 -> spike
  root cause: sku r7i.48xlarge: today 500, own median over days 1..20 = 0 -> +500 (100% of 500);
  resource i-alpha-burst explains 100% too; the tie goes to sku. m7i moved 0.
No other anomaly: alpha days 8..20 are 100 = expected; the EUR provider/service series go
200 -> 250 on day 19 (+50 = 25% < min_pct 50%); beta is flat.

Forecast, team alpha, USD (chargeback total_cost = EffectiveCost, amortised basis):
  April so far 20 x 100 + 600 = 2600 over 21 observed days (last cost day 2025-04-21 < 04-30: open)
  run-rate 2600 / 21 = 123.8095.../day; month-end 2600 x 30 / 21 = 3714.29 > budget 3000
  breach: cumulative 123.8095 x n > 3000 first at n = floor(3000 / 123.8095) + 1 = floor(24.23) + 1
          = 25 -> 2025-04-25
  May: 2600 x 31 / 21 = 3838.10, breach 2025-05-25; June 2600 x 30 / 21 = 3714.29, breach 2025-06-25
beta, EUR: 200 x 21 = 4200; month-end 4200 x 30 / 21 = 6000 <= 10000: no breach.
gamma, EUR: 150 over 21 observed days (the currency's last cost day) -> 150 x 30 / 21 = 214.29.

Unit-cost anomaly, workload beta-chat, EUR (cost per accepted output, daily):
  days 1..20: 200 / 1000 = 0.20; day 21: 200 / 400 = 0.50
  history = days 1..20 (20 >= 7), all 0.20 -> expected 0.20, MAD 0
  scaled_mad = max(1.4826 x 0, 0.05 x 0.20, 0.000001) = 0.01 (no one-cent floor on a unit cost)
  band 0.20 +- 4 x 0.01 = [0.16, 0.24]; score = (0.50 - 0.20) / 0.01 = 30 >= 4
  impact 0.30 >= min_unit_cost_impact 0 (default); impact_pct = 0.30 / 0.20 = 1.5 >= 0.5 -> spike
  root cause: outputs 400 vs median 1000 -> -60%, |ln 0.4| = 0.916; cost 200 vs 200 -> +0%, |ln 1| = 0
          -> accepted_outputs, share 0.916 / (0.916 + 0) = 1.0
  The beta cost series stays flat (200/day): only the unit cost flags. alpha-batch has no outputs: no
  unit-cost series.

All-in showback forecast, team alpha, USD:
  showback = chargeback 2600 + the storage estimate 300 x 21 active days / 30 = 210 -> 2810 so far
  run-rate 2810 / 21 = 133.8095.../day; month-end 2810 x 30 / 21 = 4014.29 > budget 3000
  breach: floor(3000 / 133.8095) = floor(22.42) = 22 -> 2025-04-01 + 22 days = 2025-04-23
          (22 days x 133.81 = 2943.81 <= 3000; 23 days = 3077.62 > 3000)
  May: 2810 x 31 / 21 = 4148.10; beta showback = its chargeback (no estimate): 6000.00.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import duckdb
import pytest

from tests import prefetch

CENT = Decimal("0.01")
SPIKE_DAY = dt.date(2025, 4, 21)


@pytest.fixture(scope="module")
def anomalies_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The publication of one refresh of tests/fixtures/anomalies/spike_2025-04 into a fresh home: the first
    of the two refreshes tests/pipeline/test_alerts.py makes of it (built ahead in tests/prefetch.py)."""
    runs = prefetch.result("alert_runs", tmp_path_factory)
    ok, reason = runs["runs"][0]
    return {"ok": ok, "reason": reason, "serving": runs["first_serving"]}


@pytest.fixture(scope="module")
def con(anomalies_run: dict):
    run = anomalies_run
    assert run["ok"], run["reason"]
    con = duckdb.connect(str(run["serving"]), read_only=True)
    yield con
    con.close()


def rows(con, sql: str, params=()) -> list[dict]:
    cur = con.execute(sql, list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def cents(value) -> Decimal:
    return Decimal(value).quantize(CENT)


def test_the_spike_day_is_the_only_anomaly(con) -> None:
    found = rows(con, "select * from fct_cost_anomalies where dimension <> 'unit_cost' order by dimension")
    assert found, "no anomaly found"
    assert {(r["day"], r["currency"], r["direction"]) for r in found} == {(SPIKE_DAY, "USD", "spike")}
    team = [r for r in found if r["dimension"] == "team"]
    assert [r["dimension_value"] for r in team] == ["alpha"]
    # every USD series (team, workload, provider, service) is alpha's: the same figures on each
    assert {r["dimension"] for r in found} >= {"team", "provider", "service"}
    for r in found:
        assert cents(r["actual"]) == Decimal("600.00")
        assert cents(r["expected"]) == Decimal("100.00")
        assert cents(r["scaled_mad"]) == Decimal("5.00")
        assert (cents(r["expected_low"]), cents(r["expected_high"])) == (Decimal("80.00"), Decimal("120.00"))
        assert r["score"] == pytest.approx(100.0)
        assert cents(r["impact_abs"]) == Decimal("500.00")
        assert r["impact_pct"] == pytest.approx(5.0)
        assert r["history_days"] == 20


def test_root_cause_is_the_spiking_sku(con) -> None:
    for r in rows(con, "select * from fct_cost_anomalies where dimension <> 'unit_cost'"):
        assert r["root_cause_dimension"] == "sku", r
        assert r["root_cause"] == "sku r7i.48xlarge +500.00 (100%)", r
        assert r["root_cause_share"] == pytest.approx(1.0)


def test_steady_and_short_series_yield_none(con) -> None:
    assert rows(con, "select * from fct_cost_anomalies where dimension <> 'unit_cost' "
                     "and (currency = 'EUR' or dimension_value in ('beta', 'gamma'))") == []
    coverage = {r["dimension_value"]: r for r in rows(con, "select * from fct_anomaly_coverage where dimension = 'team'")}
    assert coverage["gamma"]["status"] == "not enough history" and coverage["gamma"]["series_days"] == 3
    assert coverage["beta"]["status"] == "monitored" and coverage["beta"]["anomalies"] == 0
    assert coverage["beta"]["scored_days"] == 21 - 7  # days 8..21 have >= 7 days of history
    assert coverage["alpha"]["anomalies"] == 1


def forecast(con, team: str, horizon: int, basis: str = "chargeback") -> dict:
    found = rows(con, "select * from fct_spend_forecast where team_id = ? and horizon = ? and basis = ?",
                 [team, horizon, basis])
    assert len(found) == 1, (team, horizon, found)
    return found[0]


def test_forecast_and_budget_breach_by_hand(con) -> None:
    april = forecast(con, "alpha", 0)
    assert april["method"] == "run-rate" and april["days_observed"] == 21
    assert cents(april["actual_to_date"]) == Decimal("2600.00")
    assert cents(april["forecast"]) == Decimal("3714.29")
    assert cents(april["budget_monthly"]) == Decimal("3000.00")
    assert april["forecast_exceeds_budget"] is True
    assert april["budget_breach_date"] == dt.date(2025, 4, 25)
    assert april["forecast_low"] < april["forecast"] < april["forecast_high"]
    # No complete month before April: the interval is the daily spread x sqrt(days left), so it is measured.
    assert (april["forecast_status"], april["interval_basis"]) == ("forecast", "daily spread")
    may = forecast(con, "alpha", 1)
    assert may["forecast_month"] == dt.date(2025, 5, 1)
    assert cents(may["forecast"]) == Decimal("3838.10")
    assert may["budget_breach_date"] == dt.date(2025, 5, 25)
    assert forecast(con, "alpha", 3)["forecast_month"] == dt.date(2025, 7, 1)

    beta = forecast(con, "beta", 0)
    assert cents(beta["forecast"]) == Decimal("6000.00")
    assert beta["forecast_exceeds_budget"] is False and beta["budget_breach_date"] is None
    assert cents(forecast(con, "gamma", 0)["forecast"]) == Decimal("214.29")
    # Every row with an interval has a measured one; every row without one says why (never a zero-width band).
    for r in rows(con, "select * from fct_spend_forecast"):
        if r["forecast_status"] in ("actual", "forecast"):
            assert r["forecast_low"] is not None and r["forecast_high"] is not None, r
        else:
            assert r["forecast_low"] is None and r["forecast_high"] is None, r


def test_unit_cost_anomaly_by_hand(con) -> None:
    found = rows(con, "select * from fct_cost_anomalies where dimension = 'unit_cost'")
    assert len(found) == 1, found
    r = found[0]
    assert (r["dimension_value"], r["currency"], r["day"], r["direction"]) == ("beta-chat", "EUR", SPIKE_DAY, "spike")
    assert Decimal(r["actual"]).quantize(Decimal("0.0001")) == Decimal("0.5000")  # 200 / 400
    assert Decimal(r["expected"]).quantize(Decimal("0.0001")) == Decimal("0.2000")  # 200 / 1000
    assert Decimal(r["scaled_mad"]).quantize(Decimal("0.0001")) == Decimal("0.0100")  # 0.05 x 0.20
    assert Decimal(r["expected_low"]).quantize(Decimal("0.0001")) == Decimal("0.1600")
    assert Decimal(r["expected_high"]).quantize(Decimal("0.0001")) == Decimal("0.2400")
    assert r["score"] == pytest.approx(30.0)
    assert r["impact_pct"] == pytest.approx(1.5)
    assert r["history_days"] == 20
    assert r["root_cause_dimension"] == "accepted_outputs"
    assert r["root_cause"] == "accepted_outputs 400 vs 1000 (-60%); cost 200.00 vs 200.00 (+0%)"
    assert r["root_cause_share"] == pytest.approx(1.0)
    # the cost series of the same workload is flat: no cost anomaly for beta-chat
    assert rows(con, "select * from fct_cost_anomalies where dimension = 'workload' and dimension_value = 'beta-chat'") == []
    coverage = rows(con, "select * from fct_anomaly_coverage where dimension = 'unit_cost'")
    assert [(c["dimension_value"], c["series_days"], c["anomalies"]) for c in coverage] == [("beta-chat", 21, 1)]


def test_showback_forecast_by_hand(con) -> None:
    april = forecast(con, "alpha", 0, "showback")
    assert april["method"] == "run-rate" and april["days_observed"] == 21
    assert cents(april["actual_to_date"]) == Decimal("2810.00")  # 2600 + 300 x 21 / 30
    assert cents(april["forecast"]) == Decimal("4014.29")  # 2810 x 30 / 21
    assert april["budget_breach_date"] == dt.date(2025, 4, 23)  # 1 Apr + floor(3000 / 133.8095) days
    assert cents(forecast(con, "alpha", 1, "showback")["forecast"]) == Decimal("4148.10")  # 2810 x 31 / 21
    assert cents(forecast(con, "beta", 0, "showback")["forecast"]) == Decimal("6000.00")
    # the chargeback basis is unchanged beside it
    assert cents(forecast(con, "alpha", 0)["forecast"]) == Decimal("3714.29")
