"""`gpu-ledger status`: the open spend alerts (HOME/alerts.json, written by warehouse/alerts.py)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape

from warehouse.alerts import open_alerts

NEWEST = 5


def print_open_alerts(console: Console, home: Path, newest: int = NEWEST) -> int:
    """Print the count of open alerts and the newest few; returns the count."""
    alerts = open_alerts(home)
    if not alerts:
        console.print("alerts: none open")
        return 0
    undelivered = sum(1 for a in alerts if not a.get("delivered_at"))
    console.print(f"alerts: [yellow]{len(alerts)} open[/yellow] (anomalies and budget breaches; "
                  f"{undelivered} not posted to a webhook)")
    for alert in alerts[:newest]:
        console.print(f"  [yellow]{alert['kind']}[/yellow] {escape(alert['summary'])}", highlight=False)
    if len(alerts) > newest:
        console.print(f"  ... and {len(alerts) - newest} more in {home / 'alerts.json'}")
    return len(alerts)
