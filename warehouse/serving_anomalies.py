"""Readers of the published anomaly and forecast marts for the dashboard, reports and alerts.

Every reader goes through `warehouse.serving.query` (a fresh read-only connection to serving.duckdb)
and returns an empty frame when the publication predates the marts, so older homes still render.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from warehouse.serving import query, schema

ANOMALIES = "fct_cost_anomalies"
COVERAGE = "fct_anomaly_coverage"
FORECAST = "fct_spend_forecast"
SERIES = "fct_anomaly_daily"


def published(path: Path, table: str) -> bool:
    """Whether the publication holds the table."""
    return table in schema(path)


def anomalies(path: Path, team: str | None = None) -> pd.DataFrame:
    """fct_cost_anomalies, newest first; with `team`, the team's own series and its workloads' series."""
    if not published(path, ANOMALIES):
        return pd.DataFrame()
    sql = f"select * from {ANOMALIES}"
    params: list = []
    if team is not None:
        workloads = _team_workloads(path, team)
        marks = ", ".join("?" for _ in workloads) or "null"
        sql += (f" where (dimension = 'team' and dimension_value = ?)"
                f" or (dimension in ('workload', 'unit_cost') and dimension_value in ({marks}))")
        params = [team, *workloads]
    return query(path, sql + " order by day desc, abs(impact_abs) desc, anomaly_id", params)


def coverage(path: Path, team: str | None = None) -> pd.DataFrame:
    """fct_anomaly_coverage (one row per watched series); with `team`, its team series and workload series."""
    if not published(path, COVERAGE):
        return pd.DataFrame()
    sql = f"select * from {COVERAGE}"
    params: list = []
    if team is not None:
        workloads = _team_workloads(path, team)
        marks = ", ".join("?" for _ in workloads) or "null"
        sql += (f" where (dimension = 'team' and dimension_value = ?)"
                f" or (dimension in ('workload', 'unit_cost') and dimension_value in ({marks}))")
        params = [team, *workloads]
    return query(path, sql + " order by dimension, dimension_value, currency", params)


def forecasts(path: Path, team: str | None = None, basis: str | None = None) -> pd.DataFrame:
    """fct_spend_forecast rows (basis, team, currency, horizon order); filters optional."""
    if not published(path, FORECAST):
        return pd.DataFrame()
    where, params = [], []
    if team is not None:
        where.append("team_id = ?")
        params.append(team)
    if basis is not None and "basis" in schema(path)[FORECAST]:
        where.append("basis = ?")
        params.append(basis)
    sql = f"select * from {FORECAST}" + (" where " + " and ".join(where) if where else "")
    order = "basis, " if "basis" in schema(path)[FORECAST] else ""
    return query(path, sql + f" order by {order}team_id, currency, horizon", params)


def series(path: Path, dimension: str, value: str, currency: str) -> pd.DataFrame:
    """One watched daily series with its band (fct_anomaly_daily: day, actual, expected, expected_low,
    expected_high, has_history, is_anomaly), oldest first; empty when not published."""
    if not published(path, SERIES):
        return pd.DataFrame(columns=["day", "actual", "expected", "expected_low", "expected_high",
                                     "has_history", "is_anomaly"])
    return query(path, "select day, actual, expected, expected_low, expected_high, has_history, is_anomaly "
                       f"from {SERIES} where dimension = ? and dimension_value = ? and currency = ? order by day",
                 [dimension, value, currency])


def _team_workloads(path: Path, team: str) -> list[str]:
    """Workload ids the registry gives the team (empty when the registry is not published)."""
    tables = schema(path)
    for table in ("dim_workload",):
        if table in tables and {"workload_id", "team_id"} <= tables[table]:
            df = query(path, f"select distinct workload_id from {table} where team_id = ?", [team])
            return [str(w) for w in df["workload_id"]]
    return []
