"""`gpu-ledger status` and `rejects`: the open spend alerts (HOME/alerts.json, written by warehouse/alerts.py)
and the quarantined rows."""

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


def print_rejects(console: Console, ledger_db: Path, source: str | None) -> None:
    """`gpu-ledger rejects`: the quarantined rows of audit.dq_rejects, every file name whole."""
    import duckdb
    from rich.table import Table

    con = duckdb.connect(str(ledger_db), read_only=True)
    try:
        rows = con.execute(
            "select source_family, file_name, line, rule, column_name, value, message from audit.dq_rejects "
            "where ? is null or source_family = ? order by source_family, file_name, line", [source, source]
        ).fetchall()
    finally:
        con.close()
    table = Table(title=f"{len(rows)} rejects")
    for col in ("source", "file", "line", "rule", "column", "value", "message"):
        # A file name is never cut or wrapped: its column is as wide as the longest name.
        if col == "file":
            table.add_column(col, no_wrap=True, overflow="fold", min_width=max((len(str(r[1])) for r in rows), default=4))
        else:
            table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(*["" if v is None else str(v) for v in r])
    console.print(table)
