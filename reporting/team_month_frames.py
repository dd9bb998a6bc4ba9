"""Every team's and month's rows of the team reports' per-(team, month) sources, read once per publication.

A report needs six slices of one team and month (chargeback, unit costs, utilisation, showback, budgets,
the reporting-currency conversion). Asked report by report, that is six queries per report: ~430 for a
year of history, each ~3-4 ms of DuckDB's fixed cost per statement whatever its size, so the reports'
time grew with the months of history. Here each source is read whole once through the same `serving`
readers the dashboards use (same columns, same order), and a report takes its slice in memory: the
slice of a frame sorted by (period, ...) keeps the order the team's filtered query would have given.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd

from warehouse import serving, serving_screens
from warehouse.serving_overview import IDLE_COMPONENTS, WASTE_COMPONENTS

ZERO = Decimal(0)

# source -> (reader of every team and month, team column, period column); the readers are the dashboards'.
SOURCES: dict[str, tuple[Callable[[Path], pd.DataFrame], str, str]] = {
    "charges": (serving.chargeback, "team_id", "billing_period_start"),
    "units": (serving.unit_costs, "team_id", "period"),
    "util": (serving.utilisation, "team_id", "period"),
    "showback": (serving.showback, "team_id", "period"),
    "budgets": (serving.team_budgets, "team_id", "period"),
}
# Sources a publication may not have yet: their report section says so instead of failing the report.
OPTIONAL = ("units", "util", "showback", "budgets")
CONVERTED = "fct_team_budget_converted"


def _month_of(values: pd.Series) -> pd.Series:
    """The first day of each value's month as a date (periods are DATE or TIMESTAMP columns)."""
    return pd.to_datetime(values).dt.to_period("M").dt.start_time.dt.date


def _positions(teams: pd.Series, periods: pd.Series) -> dict[tuple[Any, date], Any]:
    """(team, first day of the month) -> positions of its rows, ascending (a row without a team has none)."""
    keys = pd.DataFrame({"team": teams.astype(object).to_numpy(), "month": _month_of(periods).to_numpy()})
    return keys.groupby(["team", "month"], sort=False).indices if len(keys) else {}


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows as dicts of Python scalars (what iterrows gives for a mixed frame), built column by column: a
    report's few rows each, where `to_dict` and iterrows cost more per call than the rows themselves."""
    columns = list(frame.columns)
    return [dict(zip(columns, values)) for values in zip(*(frame[c] for c in columns))]


def _take(frame: pd.DataFrame, positions: Any) -> pd.DataFrame:
    """The rows at `positions` in their order (none when None), index 0..n-1: what a boolean mask gave."""
    return frame.iloc[positions if positions is not None else []].reset_index(drop=True)


class TeamMonthFrames:
    """The whole of each source, and a team-and-month slice of it on demand."""

    def __init__(self, path: Path) -> None:
        self.frames: dict[str, pd.DataFrame | None] = {}
        self.missing: dict[str, str] = {}
        # (team, month) -> the rows' positions, ascending: one pass over each frame, so a slice costs its
        # own rows, not a scan of every month of the history (a mask per report grew with months x months)
        self._rows: dict[str, dict[tuple[Any, date], Any]] = {}
        for name, (reader, team_col, period_col) in SOURCES.items():
            try:
                frame = reader(path)
            except serving.NotPublished as exc:
                if name not in OPTIONAL:
                    raise
                self.frames[name], self.missing[name] = None, str(exc)
                continue
            self.frames[name] = frame
            self._rows[name] = _positions(frame[team_col], frame[period_col])
        self.converted = (serving.query(path, f"select * from {CONVERTED}")
                          if CONVERTED in serving.schema(path) else None)
        self._converted_rows = (_positions(self.converted["team_id"], self.converted["period"])
                                if self.converted is not None and not self.converted.empty else {})
        # The same day for every report of the publication (a scan of the bill lines): read once.
        self.charges_through = serving_screens.charges_through(path)

    def slice(self, name: str, team: str, period: date) -> pd.DataFrame | None:
        """The source's rows of one team and month (a copy, index 0..n-1); None when it is not published."""
        frame = self.frames[name]
        if frame is None:
            return None
        return _take(frame, self._rows[name].get((team, period)))

    def converted_row(self, team: str, period: date) -> pd.DataFrame | None:
        """The team's month in the reporting currency (empty when the team had no cost that month); None when
        the conversion is not published."""
        found = self.converted
        if found is None or found.empty:
            return found
        return _take(found, self._converted_rows.get((team, period)))

    def parts(self, team: str, period: date) -> dict[str, Any]:
        """The report's per-source slices, keyed as `team_reports` reads them (`<key>_missing` for an
        unpublished source)."""
        out: dict[str, Any] = {name: self.slice(name, team, period) for name in SOURCES}
        out.update({f"{name}_missing": reason for name, reason in self.missing.items()})
        return out


def idle_and_waste(showback: pd.DataFrame, currency: str) -> dict[str, Decimal]:
    """Idle cost, waste and all-in showback in `currency` of a team's month, from its showback rows (the
    `parts` slice): what `serving_overview.idle_and_waste` sums in SQL, without a query per report."""
    rows = [r for r in records(showback) if r["currency"] == currency]

    def total(components: tuple[str, ...] | None) -> Decimal:
        picked = (r["amount"] for r in rows if components is None or r["component"] in components)
        return sum((a for a in picked if a is not None and not pd.isna(a)), ZERO)

    return {"idle": total(IDLE_COMPONENTS), "waste": total(WASTE_COMPONENTS), "all_in": total(None)}
