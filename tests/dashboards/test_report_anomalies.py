"""The team report's "Anomalies and forecast" section when one reader serves every report of a publication:
each anomaly lands in its own month's report, newest first, whichever month is asked first, and the
team's marts are read once, not once per report."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import duckdb
import pytest

import reporting.team_anomalies as section
from reporting.team_anomalies import TeamAnomalyReader, team_anomalies_html

# team t1: its own series (team t1) and its workload w1's (dim_workload), one anomaly in March, two in April;
# team t2 (workload w2): one in April. Each anomaly is a spike of 50 against an expected 10 (band 8..12).
ANOMALIES = [("a-mar", "2025-03-10", "team", "t1"), ("a-apr-early", "2025-04-05", "workload", "w1"),
             ("a-apr-late", "2025-04-20", "team", "t1"), ("b-apr", "2025-04-12", "workload", "w2")]


def _publication(path: Path) -> None:
    con = duckdb.connect(str(path))
    con.execute("create table dim_workload as select * from (values ('w1', 't1'), ('w2', 't2')) "
                "as t(workload_id, team_id)")
    con.execute("""create table fct_cost_anomalies (anomaly_id varchar, day date, dimension varchar,
        dimension_value varchar, currency varchar, actual decimal(38, 12), expected decimal(38, 12),
        expected_low decimal(38, 12), expected_high decimal(38, 12), impact_abs decimal(38, 12),
        impact_pct double, direction varchar, root_cause varchar)""")
    for anomaly_id, day, dimension, value in ANOMALIES:
        con.execute("insert into fct_cost_anomalies values (?, ?, ?, ?, 'USD', 50, 10, 8, 12, 40, 4.0, 'spike', ?)",
                    [anomaly_id, day, dimension, value, f"cause of {anomaly_id}"])
    con.execute("""create table fct_anomaly_coverage as select * from (values
        ('team', 't1', 'USD', 60, 'scored'), ('workload', 'w1', 'USD', 3, 'not enough history'),
        ('workload', 'w2', 'USD', 60, 'scored')) as t(dimension, dimension_value, currency, series_days, status)""")
    con.execute("""create table fct_anomaly_daily as select dimension, dimension_value, 'USD' as currency, day,
        50.0 as actual, 10.0 as expected, 8.0 as expected_low, 12.0 as expected_high, true as has_history,
        day in (date '2025-03-10', date '2025-04-05', date '2025-04-20', date '2025-04-12') as is_anomaly
        from (values ('team', 't1'), ('workload', 'w1'), ('workload', 'w2')) as s(dimension, dimension_value),
             range(date '2025-03-01', date '2025-05-01', interval 1 day) as d(day)""")
    con.execute("""create table fct_spend_forecast (basis varchar, team_id varchar, currency varchar,
        basis_month date, forecast_month date, horizon integer, method varchar, days_observed bigint,
        forecast decimal(38, 12), forecast_low decimal(38, 12), forecast_high decimal(38, 12),
        budget_monthly decimal(38, 12), forecast_exceeds_budget boolean, budget_breach_date date)""")
    con.close()


@pytest.fixture
def publication(tmp_path: Path) -> Path:
    path = tmp_path / "serving.duckdb"
    _publication(path)
    return path


def _rows(html: str) -> list[str]:
    """The causes of the section's anomaly rows, in the order shown."""
    return [part.split("</td>")[0] for part in html.split("<td>cause of ")[1:]]


def test_each_anomaly_is_in_its_own_months_report_newest_first(publication: Path) -> None:
    reader = TeamAnomalyReader(publication)
    # April asked before March: the month split must not depend on the order of the reports
    april = team_anomalies_html(publication, "t1", date(2025, 4, 1), reader)
    march = team_anomalies_html(publication, "t1", date(2025, 3, 1), reader)
    may = team_anomalies_html(publication, "t1", date(2025, 5, 1), reader)
    other = team_anomalies_html(publication, "t2", date(2025, 4, 1), reader)
    assert _rows(april) == ["a-apr-late", "a-apr-early"] and april.count("<svg") == 2
    assert _rows(march) == ["a-mar"] and march.count("<svg") == 1
    assert _rows(may) == [] and "No spend anomaly in the team's series this month." in may
    assert _rows(other) == ["b-apr"]
    # w1's series is t1's and has 3 days: every month's report of t1 says so, none of t2's
    note = "workload w1 (USD): not enough history (3 days) to judge anomalies."
    assert all(note in html for html in (april, march, may)) and note not in other


def test_a_shared_reader_reads_each_team_once_and_shows_what_a_fresh_one_shows(
        publication: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    months = [date(2025, 3, 1), date(2025, 4, 1), date(2025, 5, 1)]
    fresh = {(t, m): team_anomalies_html(publication, t, m) for t in ("t1", "t2") for m in months}
    calls: list[str] = []
    original = section.readers.anomalies
    monkeypatch.setattr(section.readers, "anomalies",
                        lambda path, team=None: calls.append(team) or original(path, team))
    reader = TeamAnomalyReader(publication)
    shared = {(t, m): team_anomalies_html(publication, t, m, reader) for t in ("t1", "t2") for m in months}
    assert shared == fresh
    assert calls == ["t1", "t2"]  # six reports, one read per team
