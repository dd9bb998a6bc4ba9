"""The Overview's first-screen readers against the hand-written fixture: exact parts that add up to the figure,
idle and waste from the all-in showback, the dominant estimate, and filters that narrow every one of them."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

from warehouse import serving
from warehouse import serving_overview as overview

JAN, FEB = date(2025, 1, 1), date(2025, 2, 1)


def test_showback_split_adds_up_to_the_all_in_showback(serving_db: Path) -> None:
    split = overview.showback_split(serving_db, month=JAN, currency="USD")
    # Billed = the chargeback rows: 1000.105 - 100.00 + 80.00 (ml-research) + 500.25 (search)
    # + 33.333333333333 (unallocated) = 1513.688333333333; the cost-model rows by basis.
    assert split == {"Billed": Decimal("1513.688333333333"), "Owned hardware": Decimal("750.00"),
                     "List-priced estimates": Decimal("2000.00"), "Other estimates": Decimal("50.00"),
                     "Labour": Decimal("100.00")}
    total = serving.figures(serving_db, start=JAN, end=JAN, currency="USD")["showback"].iloc[0]
    assert sum(split.values(), Decimal(0)) == total  # 4413.688333333333


def test_showback_split_follows_the_team_filter(serving_db: Path) -> None:
    split = overview.showback_split(serving_db, team="ml-research", month=JAN, currency="USD")
    # ml-research only: 1000.105 - 100 + 80 = 980.105 billed; research's 750 owned-hardware is not its own.
    assert split["Billed"] == Decimal("980.105") and split["Owned hardware"] == 0
    assert overview.showback_split(serving_db, month=FEB, currency="EUR")["Billed"] == Decimal("99.99")


def test_idle_cost_and_waste_share_come_from_the_showback(serving_db: Path) -> None:
    feb = overview.idle_and_waste(serving_db, month=FEB, currency="USD")
    # search's idle capacity 25.00 is the only idle line; all-in February USD =
    # 1500.00 + 600.50 + 1.25 + 10.00 + 60.00 (chargeback) + 30.00 + 25.00 (cost model) = 2226.75.
    assert feb == {"idle": Decimal("25.00"), "waste": Decimal("25.00"), "all_in": Decimal("2226.75")}
    assert overview.idle_and_waste(serving_db, team="ml-research", month=FEB, currency="USD")["idle"] == 0


def test_the_dominant_estimate_is_named_with_its_hours(serving_db: Path) -> None:
    top = overview.largest_estimate(serving_db, month=JAN, currency="USD")
    assert (top["name"], top["pricing_status"], top["gpu_hours"], top["amount"]) == (
        "wl-train", "list-priced", 250.0, Decimal("2000.00"))
    # Company-wide 2000 / 4413.69 = 45 % (no flag); ml-research alone 2000 / 3130.105 = 64 % (flagged).
    assert top["amount"] / Decimal("4413.688333333333") < overview.DOMINANT_SHARE
    assert top["amount"] / Decimal("3130.105") > overview.DOMINANT_SHARE
    assert overview.largest_estimate(serving_db, team="search", month=JAN, currency="USD") is None


def test_unpriced_gpu_hours_follow_team_and_month(serving_db: Path) -> None:
    assert float(serving.unpriced_gpu_hours(serving_db)["gpu_hours"].sum()) == 166.5  # 120 + 36.5 + 10
    jan = serving.unpriced_gpu_hours(serving_db, month=JAN)
    assert float(jan["gpu_hours"].sum()) == 156.5  # 120 + 36.5
    assert serving.unpriced_gpu_hours(serving_db, team="search", month=JAN).empty


def test_actions_from_an_older_publication_without_statuses_are_none(serving_db: Path) -> None:
    # The fixture's candidate table predates the status column: no action can be read from it, and no error.
    assert overview.top_actions(serving_db, currency="USD").empty
