"""The "Anomalies and forecast" section of a team report.

For one team and month: the anomalies of the team's series (the team, its workloads and their unit
cost) on days of the month, each with its expected band, root cause and a small chart of its series;
'not enough history' for the team's series that could not be scored; and, in the report of the latest
month, the chargeback and all-in showback forecasts with their interval and budget breach date.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from html import escape
from pathlib import Path
from typing import Any

import pandas as pd

from reporting.forecast_status import assess, forecast_text, interval_text
from reporting.formatting import fmt_money, fmt_unit_cost
from warehouse import serving_anomalies as readers
from warehouse.serving import NotPublished

MAX_CHARTS = 5


def _amount(value: Decimal | float | None, currency: str, dimension: str) -> str:
    return fmt_unit_cost(value, currency) if dimension == "unit_cost" else fmt_money(value, currency)


def svg_series(df: pd.DataFrame, width: int = 560, height: int = 140) -> str:
    """Actual (line), expected band (shaded) and flagged days (red dots) of one series, as inline SVG."""
    if df.empty:
        return ""
    values = [float(v) for col in ("actual", "expected_low", "expected_high") for v in df[col] if pd.notna(v)]
    low, high = min(values + [0.0]), max(values) or 1.0
    n = max(len(df) - 1, 1)

    def xy(i: int, v: float) -> str:
        return f"{8 + i * (width - 16) / n:.1f},{height - 8 - (v - low) / ((high - low) or 1) * (height - 16):.1f}"

    band_top = [xy(i, float(v)) for i, v in enumerate(df["expected_high"]) if pd.notna(v)]
    band_low = [xy(i, float(v)) for i, v in enumerate(df["expected_low"]) if pd.notna(v)]
    band = (f'<polygon points="{" ".join(band_top + band_low[::-1])}" fill="#ddf4ff" stroke="none"/>'
            if band_top else "")
    line = f'<polyline points="{" ".join(xy(i, float(v)) for i, v in enumerate(df["actual"]))}" fill="none" ' \
           'stroke="#0969da" stroke-width="1.5"/>'
    dots = "".join(f'<circle cx="{xy(i, float(v)).split(",")[0]}" cy="{xy(i, float(v)).split(",")[1]}" r="4" '
                   'fill="#cf222e"/>' for i, (v, flag) in enumerate(zip(df["actual"], df["is_anomaly"])) if flag)
    # The scale and the span, so the chart reads without a hover: top value, first and last day.
    labels = (f'<text x="8" y="12" font-size="11" fill="#57606a">max {high:,.4g}</text>'
              f'<text x="8" y="{height - 1}" font-size="11" fill="#57606a">{escape(str(df["day"].iloc[0]))}</text>'
              f'<text x="{width - 8}" y="{height - 1}" font-size="11" fill="#57606a" text-anchor="end">'
              f'{escape(str(df["day"].iloc[-1]))}</text>')
    return (f'<svg width="{width}" height="{height + 6}" role="img" aria-label="series with expected band">'
            f"{band}{line}{dots}{labels}</svg>")


class TeamAnomalyReader:
    """The anomaly marts read once per team, split by month once, and each charted series read once, for every
    report of a publication: a year of history is ~70 team-month reports of a few teams, and this section, each
    team's frame filtered and converted again per report, was a quarter of the reports' time (0.25 of ~1.1 s)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._teams: dict[str, _TeamAnomalies | NotPublished] = {}
        self._series: dict[tuple[str, str, str], pd.DataFrame] = {}

    def team(self, team: str) -> _TeamAnomalies:
        """The team's anomalies (records by month), coverage and forecasts; raises NotPublished as the readers do."""
        if team not in self._teams:
            try:
                self._teams[team] = _TeamAnomalies(readers.anomalies(self.path, team=team),
                                                   readers.coverage(self.path, team=team),
                                                   readers.forecasts(self.path, team=team))
            except NotPublished as exc:
                self._teams[team] = exc
        found = self._teams[team]
        if isinstance(found, NotPublished):
            raise found
        return found

    def series(self, dimension: str, value: str, currency: str) -> pd.DataFrame:
        """One watched daily series (readers.series), read once."""
        key = (dimension, value, currency)
        if key not in self._series:
            self._series[key] = readers.series(self.path, dimension, value, currency)
        return self._series[key]


class _TeamAnomalies:
    """One team's anomaly rows as records by first day of their month (in the readers' order), its series with
    not enough history, and its forecast frame."""

    def __init__(self, found: pd.DataFrame, coverage: pd.DataFrame, forecasts: pd.DataFrame) -> None:
        self.empty = found.empty and coverage.empty
        self.by_month: dict[date, list[dict[str, Any]]] = {}
        for r in ([] if found.empty else found.to_dict("records")):
            day = pd.Timestamp(r["day"]).date()
            self.by_month.setdefault(day.replace(day=1), []).append(r)
        short = coverage[coverage["status"] == "not enough history"] if not coverage.empty else coverage
        self.short = short.to_dict("records")
        self.forecasts = forecasts


def team_anomalies_html(path: Path, team: str, period: date, reader: TeamAnomalyReader | None = None) -> str:
    """The report section as HTML ('' never: a team without anomalies says so). Pass one `reader` for every
    report of a publication so each team's marts are read and split once."""
    parts = ["<h2>Anomalies and forecast</h2>"]
    reader = reader or TeamAnomalyReader(path)
    try:
        team_rows = reader.team(team)
    except NotPublished as exc:
        return parts[0] + f'<p class="note">Not published yet: {escape(str(exc))}.</p>'
    if team_rows.empty:
        return parts[0] + '<p class="note">Anomaly detection is not published yet.</p>'
    start = pd.Timestamp(period).date()
    month = team_rows.by_month.get(start.replace(day=1), [])
    if not month:
        parts.append('<p class="note">No spend anomaly in the team\'s series this month.</p>')
    else:
        rows = []
        for r in month:
            cur, dim = r["currency"], r["dimension"]
            pct = f" ({r['impact_pct']:+.0%})" if pd.notna(r["impact_pct"]) else ""
            rows.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in (
                r["day"], f"{dim} {r['dimension_value']}", r["direction"], _amount(r["actual"], cur, dim),
                (f"{_amount(r['expected'], cur, dim)} ({_amount(r['expected_low'], cur, dim)} .. "
                 f"{_amount(r['expected_high'], cur, dim)})"), _amount(r["impact_abs"], cur, dim) + pct,
                r["root_cause"])) + "</tr>")
        parts.append("<table><thead><tr><th>day</th><th>series</th><th>direction</th><th>actual</th>"
                     "<th>expected (band)</th><th>impact</th><th>root cause</th></tr></thead><tbody>"
                     + "".join(rows) + "</tbody></table>")
        for r in month[:MAX_CHARTS]:
            series = reader.series(r["dimension"], r["dimension_value"], r["currency"])
            parts.append(f'<p class="note">{escape(r["dimension"])} {escape(r["dimension_value"])} '
                         f'({escape(r["currency"])}) per day; shaded: expected band; red: anomaly</p>'
                         + svg_series(series))
    for r in team_rows.short:
        parts.append(f'<p class="note">{escape(r["dimension"])} {escape(r["dimension_value"])} '
                     f'({escape(r["currency"])}): not enough history ({r["series_days"]} days) to judge anomalies.</p>')
    forecasts = team_rows.forecasts
    latest = forecasts[forecasts["basis_month"] == start] if not forecasts.empty else forecasts
    if not latest.empty:
        if "basis" not in latest:
            latest = latest.assign(basis="chargeback")
        rows = []
        for r, assessed in zip(latest.to_dict("records"), assess(latest).itertuples(index=False)):
            cur = r["currency"]
            budget = fmt_money(r["budget_monthly"], cur) if pd.notna(r["budget_monthly"]) else "no budget"
            breach = str(r["budget_breach_date"]) if pd.notna(r["budget_breach_date"]) else ""
            rows.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in (
                r["basis"], f"{pd.Timestamp(r['forecast_month']):%Y-%m}", r["method"], forecast_text(assessed),
                interval_text(assessed), budget, breach))
                + "</tr>")
        parts.append("<h3>Forecast</h3><table><thead><tr><th>basis</th><th>month</th><th>method</th><th>forecast</th>"
                     "<th>interval</th><th>budget</th><th>budget exceeded on</th></tr></thead><tbody>"
                     + "".join(rows) + "</tbody></table>")
    return "".join(parts)
