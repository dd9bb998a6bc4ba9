"""Spend alerts: new anomalies and forecast budget breaches, each posted once.

After a publication, `raise_alerts` reads the published marts and builds one alert per
- anomaly in fct_cost_anomalies on one of the last `LOOKBACK_DAYS` days of its series' data (older
  anomalies are history, shown on the dashboard, not news; a first refresh on a year of bills must
  not page anyone 200 times), key `anomaly|<anomaly_id>`;
- budget breach forecast for the basis month (fct_spend_forecast horizon 0, forecast > budget),
  key `budget|<basis>|<team>|<currency>|<month>`: one alert per team, month and basis, however the
  forecast figure moves from night to night.

The alert ledger, HOME/alerts.json, holds every alert ever raised by key with when it was first
seen, when a webhook accepted it, and whether it is still open (its anomaly or breach is in the
latest publication). An alert is posted (one POST each, JSON) until a webhook accepts it, then never
again, so two refreshes on the same data post nothing the second time. A webhook that cannot be
reached is logged with its host only (paths often embed a token) and retried on the next refresh;
it never fails the refresh. Without GPU_LEDGER_WEBHOOK_URL alerts are only recorded (and shown by
`gpu-ledger status`).
"""

from __future__ import annotations

import json
import logging
import math
import os
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests

from warehouse.serving import query, schema

WEBHOOK_ENV = "GPU_LEDGER_WEBHOOK_URL"
LEDGER_FILE = "alerts.json"
LOOKBACK_DAYS = 7
TIMEOUT_S = 5


@dataclass(frozen=True)
class AlertOutcome:
    """What one `raise_alerts` call did."""

    current: int  # alerts the publication holds (open)
    new: int  # of which first seen now
    posted: int  # accepted by the webhook now (new or retried)
    failed: int  # posts that did not go through (retried next time)


def ledger_path(home: Path) -> Path:
    """HOME/alerts.json."""
    return Path(home) / LEDGER_FILE


def webhook_host(url: str) -> str:
    """Scheme and host only: the rest of a webhook URL may be a secret."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}"


def _plain(value: Any) -> Any:
    """JSON-safe scalars: money as its exact decimal text, dates as ISO strings."""
    if isinstance(value, Decimal):
        return str(value.quantize(Decimal("0.01"))) if abs(value) >= 1 else str(value.normalize())
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if isinstance(value, float) and math.isnan(value):  # a null double comes back as NaN; JSON has no NaN
        return None
    return value


def current_alerts(serving: Path, lookback_days: int = LOOKBACK_DAYS) -> dict[str, dict[str, Any]]:
    """Alerts the publication holds, by key: recent anomalies and basis-month budget breaches."""
    tables = schema(serving)
    alerts: dict[str, dict[str, Any]] = {}
    if "fct_cost_anomalies" in tables and "fct_anomaly_coverage" in tables:
        df = query(serving, """
            select a.* from fct_cost_anomalies as a
            inner join fct_anomaly_coverage as c
                on c.dimension = a.dimension and c.dimension_value = a.dimension_value and c.currency = a.currency
            where a.day > c.last_day - cast(? as integer)
            order by a.day, a.anomaly_id""", [lookback_days])
        for row in df.to_dict("records"):
            key = f"anomaly|{row['anomaly_id']}"
            alerts[key] = {
                "key": key, "kind": "anomaly", "day": _plain(row["day"]),
                "summary": (f"{row['direction']} in {row['dimension']} {row['dimension_value']} on {row['day']}: "
                            f"{_plain(row['actual'])} {row['currency']} vs expected {_plain(row['expected'])} "
                            f"({_plain(row['expected_low'])}..{_plain(row['expected_high'])}); {row['root_cause']}"),
                **{k: _plain(row[k]) for k in ("dimension", "dimension_value", "currency", "actual", "expected",
                                               "expected_low", "expected_high", "impact_abs", "impact_pct",
                                               "score", "direction", "root_cause")},
            }
    if "fct_spend_forecast" in tables:
        has_basis = "basis" in tables["fct_spend_forecast"]
        basis = "basis" if has_basis else "'chargeback' as basis"
        df = query(serving, f"""
            select {basis}, team_id, currency, forecast_month, method, forecast, forecast_low, forecast_high,
                   budget_monthly, budget_breach_date
            from fct_spend_forecast
            where horizon = 0 and forecast_exceeds_budget
            order by 1, team_id, currency""")
        for row in df.to_dict("records"):
            key = f"budget|{row['basis']}|{row['team_id']}|{row['currency']}|{row['forecast_month']}"
            alerts[key] = {
                "key": key, "kind": "budget_breach", "day": _plain(row["budget_breach_date"]),
                "summary": (f"{row['team_id']} {row['basis']} {str(row['forecast_month'])[:7]} forecast "
                            f"{_plain(row['forecast'])} {row['currency']} > budget {_plain(row['budget_monthly'])}; "
                            f"exceeded on {row['budget_breach_date']}"),
                **{k: _plain(row[k]) for k in ("basis", "team_id", "currency", "forecast_month", "method", "forecast",
                                               "forecast_low", "forecast_high", "budget_monthly",
                                               "budget_breach_date")},
            }
    return alerts


def load_ledger(home: Path) -> dict[str, dict[str, Any]]:
    """The alert ledger by key (empty when none was written yet)."""
    path = ledger_path(home)
    if not path.exists():
        return {}
    return {a["key"]: a for a in json.loads(path.read_text()).get("alerts", [])}


def _save_ledger(home: Path, alerts: dict[str, dict[str, Any]]) -> None:
    """Write the ledger whole, then rename: a crash mid-write never loses the record of what was sent."""
    path = ledger_path(home)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"alerts": sorted(alerts.values(), key=lambda a: (a["first_seen"], a["key"]))},
                              indent=1))
    os.replace(tmp, path)


def post(url: str, payload: dict[str, Any], log: logging.Logger) -> bool:
    """POST one alert; False (logged by host and error kind only) when the webhook cannot take it."""
    try:
        resp = requests.post(url, json=payload, timeout=TIMEOUT_S)
        resp.raise_for_status()
    except requests.RequestException as exc:
        status = getattr(exc.response, "status_code", None)
        log.warning(f"alert webhook {webhook_host(url)} not notified: {type(exc).__name__}"
                    + (f" (HTTP {status})" if status else ""))
        return False
    return True


def raise_alerts(home: Path, serving: Path, webhook_url: str | None,
                 log: logging.Logger | None = None, now: datetime | None = None) -> AlertOutcome:
    """Record the publication's alerts in HOME/alerts.json and post each not yet delivered one."""
    log = log or logging.getLogger(__name__)
    stamp = (now or datetime.now(UTC)).isoformat(timespec="seconds")
    ledger = load_ledger(home)
    current = current_alerts(serving)
    new = posted = failed = 0
    for key, entry in ledger.items():
        entry["open"] = key in current
    for key, alert in current.items():
        if key not in ledger:
            new += 1
            ledger[key] = {**alert, "first_seen": stamp, "delivered_at": None, "open": True}
        entry = ledger[key]
        if entry.get("delivered_at") or not webhook_url:
            continue
        # Record each delivery as it happens: a crash later in the loop must not post it twice.
        if post(webhook_url, {"source": "gpu-ledger", **alert}, log):
            entry["delivered_at"] = stamp
            posted += 1
            _save_ledger(home, ledger)
        else:
            failed += 1
            if failed == 1:
                # An unreachable webhook: the remaining alerts wait for the next refresh instead of
                # each waiting out its own timeout now.
                break
    _save_ledger(home, ledger)
    if failed:
        log.warning(f"{len(current)} alerts open, {posted} posted, delivery of the rest retried next refresh")
    return AlertOutcome(current=len(current), new=new, posted=posted, failed=failed)


def open_alerts(home: Path) -> list[dict[str, Any]]:
    """Open alerts (still in the latest publication), newest first by first seen, then by day."""
    alerts = [a for a in load_ledger(home).values() if a.get("open")]
    return sorted(alerts, key=lambda a: (a.get("first_seen") or "", a.get("day") or "", a["key"]), reverse=True)
