"""The golden exchange-rate case: the real pipeline on tests/golden_fx/inputs/ (a USD and a EUR account and
a CAD API invoice over the 2025-01-31 .. 2025-02-03 month-end weekend, rates from a small ECB-layout file),
figures in the reporting currency (USD) to the cent. Every expected value is derived by hand in
tests/golden_fx/EXPECTED.md (section numbers in the comments); the arithmetic is repeated beside it.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from tests import golden_cases, prefetch
from tests.golden_cases import cents, rows

REPO = Path(__file__).resolve().parents[2]
INPUTS = REPO / "tests" / "golden_fx" / "inputs"
DEC, JAN, FEB = "2024-12-01", "2025-01-01", "2025-02-01"
# USD per 1 unit at Friday 2025-01-31's ECB figures (USD 1.0400, CAD 1.5000, CNY 7.5000 per EUR), 10 decimals.
CAD_FRI = round(Decimal("1.04") / Decimal("1.50"), 10)  # 0.6933333333
CNY_FRI = round(Decimal("1.04") / Decimal("7.50"), 10)  # 0.1386666667


def build_golden_fx(root: Path) -> dict:
    """One refresh of tests/golden_fx/inputs into a fresh home (a tests/prefetch.py job)."""
    return golden_cases.refresh(root, INPUTS)


@pytest.fixture(scope="module")
def golden_fx_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("golden_fx", tmp_path_factory)


@pytest.fixture(scope="module")
def con(golden_fx_run: dict):
    with golden_cases.published(golden_fx_run) as con:
        yield con


def test_weekend_takes_fridays_rate_and_nothing_beyond_the_window(con) -> None:
    # EXPECTED.md § 1
    got = {(str(r["day"]), r["currency"]): (r["rate_to_reporting"], str(r["rate_date"]), r["rate_age_days"])
           for r in rows(con, "select * from fct_fx_rates_daily where day between '2025-01-31' and '2025-02-03'")}
    assert CAD_FRI == Decimal("0.6933333333") and CNY_FRI == Decimal("0.1386666667")
    for day, age in (("2025-01-31", 0), ("2025-02-01", 1), ("2025-02-02", 2)):
        assert got[(day, "EUR")] == (Decimal("1.04"), "2025-01-31", age)
        assert got[(day, "CAD")] == (CAD_FRI, "2025-01-31", age)
        assert got[(day, "CNY")] == (CNY_FRI, "2025-01-31", age)
    assert got[("2025-02-03", "EUR")] == (Decimal("1.02"), "2025-02-03", 0)
    assert got[("2025-02-03", "CAD")][0] == round(Decimal("1.02") / Decimal("1.53"), 10)  # 0.6666666667
    assert not any(cur == "USD" for _, cur in got)  # the reporting currency needs no rate
    # Monday's rates reach Friday 02-07 (4 days) and no further; Monday 2024-11-25's reach Friday 11-29:
    # nothing from 2024-11-30 to 2025-01-29, so the CAD line of 2024-12-02 has no rate.
    (last,) = rows(con, "select max(day) as day, count(*) filter (where day between '2024-11-30' and '2025-01-29') "
                        "as gap, max(day) filter (where day < '2025-01-30') as before from fct_fx_rates_daily")
    assert (str(last["day"]), last["gap"], str(last["before"])) == ("2025-02-07", 0, "2024-11-29")


def test_chargeback_stays_native_with_its_converted_total_beside(con) -> None:
    # EXPECTED.md § 2
    got = {(str(r["period"]), r["currency"]): r for r in rows(con, "select * from fct_money_reporting")}
    expected = {
        (JAN, "USD"): ("648.00", "648.00"),
        (FEB, "USD"): ("648.00", "648.00"),
        # 600 x 1.04 (Sat at Friday's) + 50 x 1.04 (Sun at Friday's) + 100 x 1.02 (Mon) = 624 + 52 + 102 = 778.00
        (FEB, "EUR"): ("750.00", "778.00"),
        # 300 x 1.04 / 1.50 = 300 x 0.6933333333 = 207.99999999 -> 208.00
        (FEB, "CAD"): ("300.00", "208.00"),
        (DEC, "CAD"): ("150.00", None),  # the last rate before 2024-12-02 is 2024-11-25: 7 days > 4
    }
    assert set(got) == set(expected)
    for key, (native, usd) in expected.items():
        row = got[key]
        assert row["reporting_currency"] == "USD"
        assert (cents(row["invoice"]), cents(row["chargeback"]), cents(row["showback"])) == (Decimal(native),) * 3, key
        want = None if usd is None else Decimal(usd)
        assert (cents(row["invoice_reporting"]), cents(row["chargeback_reporting"]), cents(row["showback_reporting"])) \
            == (want,) * 3, key
    assert got[(FEB, "CAD")]["invoice_reporting"] == 300 * CAD_FRI  # exact DECIMAL product, 207.99999999
    assert got[(FEB, "EUR")]["effective_rate"] == round(Decimal(778) / Decimal(750), 10)  # 1.0373333333
    # The gap is loud: null figures and the reason, never a conversion at 1.0.
    gap = got[(DEC, "CAD")]
    assert gap["effective_rate"] is None
    assert gap["fx_gap_reason"] == "1 invoice line(s) without a CAD rate within the lookback window (first 2024-12-02)"
    assert all(r["fx_gap_reason"] is None for k, r in got.items() if k != (DEC, "CAD"))
    # The chargeback itself stays in the billing currencies, one row each.
    native = {(str(r["billing_period_start"]), r["currency"]): cents(r["total_cost"])
              for r in rows(con, "select * from fct_chargeback_monthly where team_id = 'support'")}
    assert native == {(JAN, "USD"): Decimal("648.00"), (FEB, "USD"): Decimal("648.00"),
                      (FEB, "EUR"): Decimal("750.00"), (FEB, "CAD"): Decimal("300.00"), (DEC, "CAD"): Decimal("150.00")}


def test_unit_cost_in_the_reporting_currency(con) -> None:
    # EXPECTED.md § 3
    got = {str(r["period"]): r for r in rows(con, "select * from fct_workload_unit_cost_reporting "
                                          "where workload_id = 'chat' and basis = 'production'")}
    assert set(got) == {DEC, JAN, FEB}
    # January: 648.00 / 900 accepted = 0.72
    assert (cents(got[JAN]["all_in_cost_reporting"]), got[JAN]["accepted_outputs"]) == (Decimal("648.00"), 900)
    assert got[JAN]["effective_unit_cost_reporting"] == Decimal("0.72")
    # February: 648.00 + 750 x 1.0373333333 + 300 x 0.6933333333 = 648 + 777.999999975 + 207.99999999
    # = 1,633.999999965 -> 1,634.00; / (950 + 760 + 1,140 = 2,850) = 0.5733333333...
    feb = got[FEB]
    assert feb["reporting_currency"] == "USD" and feb["currencies"] == 3 and feb["fx_gap_reason"] is None
    assert feb["all_in_cost_reporting"] == Decimal("1633.999999965")
    assert cents(feb["all_in_cost_reporting"]) == Decimal("1634.00") and feb["accepted_outputs"] == 2850
    assert cents(feb["effective_unit_cost_reporting"]) == Decimal("0.57")
    assert round(feb["effective_unit_cost_reporting"], 9) == Decimal("0.573333333")
    assert feb["native_costs"] == "CAD 300.00 at 0.693333; EUR 750.00 at 1.037333; USD 648.00"
    # December: CAD 150.00 has no rate: null, with the reason
    assert got[DEC]["all_in_cost_reporting"] is None and got[DEC]["effective_unit_cost_reporting"] is None
    assert got[DEC]["fx_gap_reason"] == "no rate for CAD in 2024-12-01 within the lookback window: not converted"


def test_team_showback_in_usd(con) -> None:
    # EXPECTED.md § 4: 648.00 + 778.00 (EUR) + 208.00 (CAD) = 1,634.00 in February
    got = {str(r["period"]): r for r in rows(con, "select * from fct_team_budget_converted where team_id = 'support'")}
    assert {p: (cents(r["showback_reporting"]), cents(r["chargeback_reporting"])) for p, r in got.items()} == {
        JAN: (Decimal("648.00"),) * 2, FEB: (Decimal("1634.00"),) * 2, DEC: (None, None)}
    assert "CAD" in got[DEC]["fx_gap_reason"]
    assert all(r["reporting_currency"] == "USD" for r in got.values())


def test_cny_offer_converts_at_its_observation_days_rate(golden_fx_run: dict, con) -> None:
    # EXPECTED.md § 5: CNY 156.00 / 8 GPUs = 19.50 a GPU-hour, observed Sat 2025-02-01 -> Friday's
    # 0.1386666667: 19.50 x 0.1386666667 = 2.70400000065 USD (2.70); x 8 = 21.632000005 (21.63).
    assert golden_fx_run["ok"], golden_fx_run["reason"]
    ledger = duckdb.connect(str(golden_fx_run["home"] / "ledger.duckdb"), read_only=True)
    try:
        (offer,) = golden_cases.rows(ledger, "select * from intermediate.int_decision_instance_offers "
                                             "where instance_type = 'p4d.24xlarge'")
    finally:
        ledger.close()
    assert (offer["region"], offer["gpu_model"], offer["gpus_per_instance"]) == ("cn-north-1", "A100-40GB", 8)
    assert (offer["price_currency"], offer["native_price_per_gpu_hour"]) == ("CNY", Decimal("19.50"))
    assert (offer["fx_rate"], str(offer["fx_rate_date"])) == (CNY_FRI, "2025-01-31")
    assert offer["price_per_gpu_hour"] == Decimal("19.50") * CNY_FRI == Decimal("2.70400000065")
    assert cents(offer["price_per_gpu_hour"]) == Decimal("2.70") and cents(offer["price_per_instance_hour"]) == Decimal("21.63")
    # In the candidate comparison: 1 instance x 21.632000005 x 672 h (February) = 14,536.704003 -> 14,536.70
    (cand,) = rows(con, "select * from fct_candidate_comparison where instance_type = 'p4d.24xlarge'")
    assert (cand["instances"], cand["currency"], cents(cand["price_per_instance_hour"])) == (1, "USD", Decimal("21.63"))
    assert cents(cand["gpu_cost"]) == Decimal("14536.70")
    assert cand["notes"].endswith("; priced CNY 19.5000 a GPU-hour, converted at 0.1386666667 (rate of 2025-01-31)")
    # Today in USD at the month rates, always-on x 28/3 (February, 3 observed days):
    # (648.00 + 750 x 1.0373333333 + 300 x 0.6933333333) x 28/3 = 1,633.999999965 x 28/3 = 15,250.67; the offer
    # keeps today's non-compute, (50 + 100) EUR x 1.0373333333 + 300 CAD x 0.6933333333 = 363.60 x 28/3 = 3,393.60:
    # 14,536.70 + 3,393.60 = 17,930.30, more than today.
    assert cents(cand["today_monthly_cost"]) == Decimal("15250.67")
    assert cents(cand["storage_network"]) == Decimal("3393.60") and cents(cand["monthly_cost"]) == Decimal("17930.30")
    assert cand["status"] == "costs more"
    (usd,) = rows(con, "select notes from fct_candidate_comparison where instance_type = 'p5.48xlarge'")
    assert "priced" not in usd["notes"]  # a USD offer needs no rate


def test_back_test_prices_todays_shape_in_usd_for_its_month_only(con) -> None:
    # EXPECTED.md § 5: February's A100 x 8 hours are Sat (EUR account) and Mon (USD account), 24 h each:
    # (648.00 USD + 600.00 EUR x 1.04 at Friday's rate) / 48 instance-hours = 1,272.00 / 48 = 26.50; Friday's
    # January line stays out. One instance at a time: 1 x 26.50 x 672 h = 17,808.00.
    (shape,) = rows(con, "select * from fct_candidate_comparison where route_kind = 'today_shape'")
    assert (shape["instance_type"], shape["instances"]) == ("standard_nd96asr_v4", 1)
    assert shape["price_per_instance_hour"] == Decimal("26.5")
    assert cents(shape["gpu_cost"]) == Decimal("17808.00")

